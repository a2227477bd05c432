// Shared by the site's scripts: build DOM nodes from text only (never HTML), since much of
// what they show (log lines, entry text) must stay inert.
window.kbDom = {
  // a code span in a title: a run of backticks, its text, the same run again (not part of a longer run)
  titleCode: /(?<!`)(`+)(?!`)([\s\S]+?)(?<!`)\1(?!`)/g,

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

  // One line of an entry's Markdown prose as inert nodes: `code spans` (of any number of
  // backticks) become <code> (made by `code`, plain by default), **bold** markers are dropped,
  // and a backtick left unpaired (a sentence cut inside a span) is dropped too.
  prose(text, code) {
    const makeCode = code || ((t) => window.kbDom.el("code", { text: t }));
    const plain = (t) => t.replace(/`/g, "").replace(/\*\*([^*]+)\*\*/g, "$1");
    const frag = document.createDocumentFragment();
    const source = String(text || "");
    let pos = 0;
    for (const m of source.matchAll(/(`+)([\s\S]+?)\1(?!`)/g)) {
      frag.append(plain(source.slice(pos, m.index)), makeCode(m[2].trim() || m[2]));
      pos = m.index + m[0].length;
    }
    frag.append(plain(source.slice(pos)));
    return frag;
  },

  // An entry's title as inert nodes: its `code spans` become <code>; everything else stays as
  // written, an unpaired backtick included (glibc quotes as "version `GLIBC_2.34' not found").
  title(text) {
    const frag = document.createDocumentFragment();
    const source = String(text || "");
    let pos = 0;
    for (const m of source.matchAll(window.kbDom.titleCode)) {
      frag.append(source.slice(pos, m.index), window.kbDom.el("code", { text: m[2].trim() || m[2] }));
      pos = m.index + m[0].length;
    }
    frag.append(source.slice(pos));
    return frag;
  },

  // The same title as one line of plain text (a list of titles, a label): code spans' backticks
  // dropped, an unpaired backtick kept.
  plainTitle(text) {
    return String(text || "").replace(window.kbDom.titleCode, (_, ticks, code) => code.trim() || code);
  },
};
