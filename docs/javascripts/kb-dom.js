// Shared by the site's scripts: build DOM nodes from text only (never HTML), since much of
// what they show (log lines, entry text) must stay inert.
window.kbDom = {
  el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children) if (child !== null && child !== undefined && child !== "") node.append(child);
    return node;
  },
};
