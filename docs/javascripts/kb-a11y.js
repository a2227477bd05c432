// Accessibility touches on the theme's own widgets, which it builds after the page loads.
// Each code block gets a <nav> for its copy button; several unnamed navigation landmarks on one
// page cannot be told apart by a screen reader, so each is named after its block.
(function () {
  "use strict";

  let count = 0;
  function label(root) {
    const navs = root.matches && root.matches(".md-code__nav") ? [root] : root.querySelectorAll ? root.querySelectorAll(".md-code__nav:not([aria-label])") : [];
    for (const nav of navs) if (!nav.hasAttribute("aria-label")) nav.setAttribute("aria-label", `Code block ${++count}: actions`);
  }

  function start() {
    label(document);
    new MutationObserver((records) => {
      for (const record of records) for (const node of record.addedNodes) if (node.nodeType === 1) label(node);
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
