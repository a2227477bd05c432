// GPU Failure Atlas search: built for what engineers paste (a whole log line with prefixes,
// numbers and punctuation) as much as for two typed words.
//
// The index (generator/site/search_index.py) is fetched the first time the box gets focus or text,
// never on page load. A query is scored against every entry in four ways, strongest first:
//   1. a line of the query matches one of the entry's log signatures (the same patterns the
//      log doctor runs), or names the entry outright (its id, "Xid 79");
//   2. an exact phrase of the entry (an alias such as an error string, a part of its title)
//      appears in the query, longer phrases counting more;
//   3. an error name (ncclRemoteError, CUDA_ERROR_ILLEGAL_ADDRESS, CUBLAS_STATUS_...) in the
//      query that the entry lists;
//   4. the remaining words, weighted by where they occur (id, title, aliases, tags, quick
//      answer) and by how rare they are in the corpus; the last word also as a prefix while
//      typing.
// Words that carry no meaning in a log line (stop words, one letter, long numbers, hex,
// timestamps) are dropped before scoring; the raw text is kept for the signature patterns.
(function () {
  "use strict";

  const { el } = window.kbDom;
  const STOP = new Set(("a an and are as at be by can could did do does for from had has have if in into is it its " +
    "of on or our so that the their then there these this to too was were will with you your we i me my " +
    "what why how when which who please help any all after before while via vs").split(" "));
  const MAX_LINES = 200;          // lines of a pasted query tested against the signatures
  const MAX_LINE = 4000;          // characters of one line tested
  const FIELD_WEIGHT = { id: 3, title: 3, alias: 2.2, tag: 2, summary: 0.8 };
  const LIMIT = 10;
  // A pasted line (four meaningful words or more) whose best entry neither recognises it by a
  // signature nor shares a phrase, a name or much of its rare words with it: the list is a guess,
  // and the reader is told so. On the dev field sample's last error-looking lines (1,193 logs,
  // 2026-12-05), an unrecognised top result scoring under 20 was right 1 time in 61, from 20 to 40
  // 9 times in 91, from 40 to 60 16 times in 41: the line is drawn at 40 (152 flagged, 10 right).
  const WEAK_SCORE = 40;

  function weak(hits, query) {
    const top = hits.find((h) => h.entry);
    return Boolean(top) && !top.recognised && top.score < WEAK_SCORE && words(query).filter(meaningful).length >= 4;
  }

  function weakNote(status, base) {
    status.append("No entry recognises this line; these only share words with it. For a whole log, try the ",
      el("a", { href: base + "diagnose/", text: "log doctor" }), ".");
  }

  function words(text) {
    return text.toLowerCase().split(/[^a-z0-9_]+/).filter(Boolean);
  }

  function meaningful(word) {
    if (word.length < 2 || STOP.has(word)) return false;
    if (/^\d+$/.test(word)) return word.length <= 3;          // codes (79, 13, 35), not pids or times
    if (/^0x[0-9a-f]+$/.test(word) || /^[0-9a-f]{8,}$/.test(word)) return false;   // addresses, hashes
    if (/\d/.test(word) && /^[0-9a-f_]+$/.test(word) && word.length > 6) return false;
    return true;
  }

  // lower case, every run of non-alphanumerics one space: phrases compare on this form
  function flat(text) {
    return " " + text.toLowerCase().replace(/[^a-z0-9_]+/g, " ").trim() + " ";
  }

  // an error name as written: two humps of camelCase, or UPPER_SNAKE, or a word_with_underscores
  function isName(raw) {
    return /[a-z][A-Z].*[A-Z]|^[a-z]+[A-Z][a-z]+[A-Z]/.test(raw) || /^[A-Za-z0-9]+(_[A-Za-z0-9]+){1,}$/.test(raw);
  }

  function toRegExp(pattern, ignoreCase) {
    let source = pattern;
    let flags = "";
    if (source.startsWith("(?i)")) { source = source.slice(4); flags = "i"; }
    else if (ignoreCase) flags = "i";
    source = source.replace(/\(\?P</g, "(?<").replace(/\\Z/g, "$").replace(/\\A/g, "^");
    try { return new RegExp(source, flags); } catch (err) { return null; }
  }

  // ---- the index, prepared once --------------------------------------------------------------
  class Index {
    constructor(doc) {
      this.entries = doc.entries.map((e) => this.prepare(e));
      this.pages = doc.pages.map((p) => ({ ...p, words: new Set(words(`${p.t} ${p.k}`).filter(meaningful)) }));
      const df = new Map();
      for (const e of this.entries) for (const w of e.weights.keys()) df.set(w, (df.get(w) || 0) + 1);
      this.idf = new Map();
      const n = this.entries.length;
      for (const [w, count] of df) this.idf.set(w, Math.log(1 + n / count));
      this.vocabulary = [...df.keys()].sort();
      this.byXid = new Map();
      for (const e of this.entries) {
        const m = /^(s?xid)-(\d+)$/.exec(e.i);
        if (m) this.byXid.set(`${m[1]} ${m[2]}`, e);
      }
      this.byId = new Map(this.entries.map((e) => [e.i, e]));
    }

    prepare(e) {
      const weights = new Map();
      const add = (text, weight) => {
        for (const w of words(text)) if (meaningful(w) && (weights.get(w) || 0) < weight) weights.set(w, weight);
      };
      add(e.s, FIELD_WEIGHT.summary);
      for (const g of e.g) add(g, FIELD_WEIGHT.tag);
      for (const a of e.a) add(a, FIELD_WEIGHT.alias);
      add(e.t, FIELD_WEIGHT.title);
      add(e.i.replace(/-/g, " "), FIELD_WEIGHT.id);
      const phrases = new Set();
      const addPhrase = (text) => {
        const f = flat(text);
        const n = f.trim().split(" ").length;
        if (f.trim().length >= 8 && (n >= 2 || f.trim().length >= 12)) phrases.add(f);
      };
      for (const a of e.a) addPhrase(a);
      for (const part of e.t.split(/[:()\/,;]| - |\.\.\.|…/)) addPhrase(part);
      for (const g of e.g) if (/\s/.test(g.trim())) addPhrase(g);
      const names = new Set();
      for (const text of [e.t, ...e.a, ...e.g]) {
        for (const raw of text.split(/[^A-Za-z0-9_]+/)) if (raw.length >= 6 && isName(raw)) names.add(raw.toLowerCase());
      }
      const patterns = e.p.map(([p, ic]) => toRegExp(p, ic)).filter(Boolean);
      return { ...e, weights, phrases: [...phrases], names, patterns, idPhrase: ` ${e.i.replace(/-/g, " ")} ` };
    }

    prefixed(prefix) {
      // vocabulary words that start with prefix (binary search, then a bounded walk)
      let lo = 0, hi = this.vocabulary.length;
      while (lo < hi) { const mid = (lo + hi) >> 1; if (this.vocabulary[mid] < prefix) lo = mid + 1; else hi = mid; }
      const out = [];
      for (let i = lo; i < this.vocabulary.length && out.length < 60 && this.vocabulary[i].startsWith(prefix); i++) {
        if (this.vocabulary[i] !== prefix) out.push(this.vocabulary[i]);
      }
      return out;
    }

    search(raw, limit) {
      const query = raw.slice(0, 200000);
      const lines = query.split(/\r?\n/).map((l) => l.slice(0, MAX_LINE)).filter((l) => l.trim()).slice(0, MAX_LINES);
      const flatQuery = flat(query);
      const rawWords = query.split(/[^A-Za-z0-9_]+/).filter(Boolean);
      const names = new Set(rawWords.filter((w) => w.length >= 6 && isName(w)).map((w) => w.toLowerCase()));
      const all = words(query);
      const terms = [...new Set(all.filter(meaningful))];
      const typing = !/\s$/.test(query) && all.length > 0;
      const last = typing ? all[all.length - 1] : null;
      const prefixWords = last && last.length >= 2 && meaningful(last) ? this.prefixed(last) : [];
      const xids = new Set();
      for (const m of query.matchAll(/\b(s?xid)\b[\s:#(]*(?:PCI:[0-9a-f:.]+\)?[\s:,]*)?(\d{1,3})\b/gi)) {
        xids.add(`${m[1].toLowerCase()} ${m[2]}`);
      }
      const scored = [];
      for (const e of this.entries) {
        let score = 0;
        let recognised = false;
        for (const re of e.patterns) {
          if (lines.some((line) => re.test(line))) { recognised = true; break; }
        }
        if (recognised) score += 100;
        if (flatQuery.includes(e.idPhrase) || flatQuery.trim() === e.i.replace(/-/g, " ")) score += 80;
        for (const key of xids) if (this.byXid.get(key) === e) score += 120;
        let phrase = 0;
        for (const p of e.phrases) {
          if (flatQuery.includes(p)) phrase = Math.max(phrase, p.trim().split(" ").length);
          else if (flatQuery.trim().length >= 6 && p.includes(flatQuery)) phrase = Math.max(phrase, 1.5);
        }
        score += phrase * 6;
        for (const n of names) if (e.names.has(n)) score += 25;
        let words = 0;
        let matched = 0;
        for (const t of terms) {
          const w = e.weights.get(t);
          if (w) { words += w * (this.idf.get(t) || 0); matched++; }
        }
        if (last && !e.weights.has(last) && prefixWords.length) {
          let best = 0;
          for (const w of prefixWords) {
            const weight = e.weights.get(w);
            if (weight) best = Math.max(best, 0.6 * weight * (this.idf.get(w) || 0));
          }
          if (best) { words += best; matched++; }
        }
        // scattered words count less the fewer of the query's words they cover
        if (terms.length) words *= 0.5 + 0.5 * Math.min(1, matched / Math.min(terms.length, 6));
        score += words;
        if (score > 0.5) {
          score += 0.4 * Math.log(1 + e.r);
          scored.push({ entry: e, score, recognised });
        }
      }
      for (const p of this.pages) {
        let s = 0;
        for (const t of terms) if (p.words.has(t)) s += 2;
        if (last && [...p.words].some((w) => w.startsWith(last) && w !== last)) s += 1;
        if (s >= 2) scored.push({ page: p, score: s * 0.9 });
      }
      // A wrapper (a launcher's "a worker failed", a shell's "Segmentation fault", PyTorch's hint after
      // a CUDA error) restates whatever other failure the paste shows, as in the log doctor: when a
      // line of the paste is recognised by another entry, the wrapper comes after every such entry.
      const roots = scored.filter((h) => h.recognised && !h.entry.w).map((h) => h.score);
      if (roots.length) {
        const floor = Math.min(...roots);
        for (const h of scored) if (h.entry && h.entry.w && h.score >= floor) h.score = floor - 1;
      }
      scored.sort((a, b) => b.score - a.score || (a.entry && b.entry ? a.entry.i.localeCompare(b.entry.i) : 0));
      return scored.slice(0, limit);
    }
  }

  // ---- loading ---------------------------------------------------------------------------------
  let loading = null;
  function loadIndex(url) {
    if (!loading) {
      loading = fetch(url).then((r) => {
        if (!r.ok) throw new Error(`the search index could not be loaded (HTTP ${r.status})`);
        return r.json();
      }).then((doc) => new Index(doc));
      loading.catch(() => { loading = null; });
    }
    return loading;
  }

  // ---- rendering -------------------------------------------------------------------------------
  // In the header's list each result is an option of the combobox: an option holds no link (it
  // would be a control inside a control), so a click or Enter on it opens its page. On the search
  // page results are plain list items holding real links.
  function resultItem(hit, base, id, selected, option = true) {
    const href = base + (hit.entry ? hit.entry.u : hit.page.u);
    const item = option
      ? el("li", { class: "kb-search__item", role: "option", id, "aria-selected": selected ? "true" : "false", "data-href": href })
      : el("li", { class: "kb-search__item" });
    const body = option
      ? el("span", { class: "kb-search__link", "data-href": href, "data-id": hit.entry ? hit.entry.i : null })
      : el("a", { class: "kb-search__link", href, "data-id": hit.entry ? hit.entry.i : null });
    if (hit.entry) {
      const e = hit.entry;
      body.append(el("span", { class: "kb-search__title" }, window.kbDom.title(e.t)),
        el("span", { class: "kb-search__meta" },
          el("code", { text: e.i }),
          el("span", { text: ` · ${e.c}` }),
          hit.recognised ? el("span", { class: "kb-search__recognised", text: "log line recognised" }) : null),
        el("span", { class: "kb-search__summary", text: e.s }));
    } else {
      body.append(el("span", { class: "kb-search__title", text: hit.page.t }), el("span", { class: "kb-search__meta", text: "page" }));
    }
    item.append(body);
    return item;
  }

  // the site's root as the page links to it (relative, so a site under a subpath works)
  function siteBase(box) {
    return box.dataset.base.endsWith("/") ? box.dataset.base : box.dataset.base + "/";
  }

  function mountBox(root) {
    const input = root.querySelector(".kb-search__input");
    const panel = root.querySelector(".kb-search__panel");
    const list = root.querySelector(".kb-search__results");
    const status = root.querySelector(".kb-search__status");
    const opener = root.querySelector(".kb-search__open");
    const closer = root.querySelector(".kb-search__close");
    const form = root.querySelector(".kb-search__form");
    const base = siteBase(root);
    let hits = [];
    let active = -1;
    let seq = 0;

    const start = () => loadIndex(root.dataset.index);
    input.addEventListener("focus", start, { once: true });

    function select(i) {
      active = i;
      list.querySelectorAll(".kb-search__item").forEach((node, n) => {
        node.setAttribute("aria-selected", n === i ? "true" : "false");
        if (n === i) { input.setAttribute("aria-activedescendant", node.id); node.scrollIntoView({ block: "nearest" }); }
      });
      if (i < 0) input.removeAttribute("aria-activedescendant");
    }

    function show(open) {
      panel.hidden = !open;
      input.setAttribute("aria-expanded", open ? "true" : "false");
    }

    async function run() {
      const query = input.value;
      const mine = ++seq;
      if (!query.trim()) { show(false); hits = []; return; }
      show(true);
      let index;
      try {
        if (!loading) status.textContent = "Loading the index…";
        index = await start();
      } catch (err) {
        if (mine === seq) status.textContent = `Search is unavailable: ${err.message}. Reload the page to try again.`;
        return;
      }
      if (mine !== seq) return;
      hits = index.search(query, LIMIT);
      list.replaceChildren(...hits.map((hit, i) => resultItem(hit, base, `kb-search-r${i}`, i === 0)));
      active = hits.length ? 0 : -1;
      select(active);
      status.replaceChildren();
      if (!hits.length) {
        status.append("Nothing matches. For a whole log, try the ", el("a", { href: base + "diagnose/", text: "log doctor" }), ".");
      } else if (weak(hits, query)) {
        weakNote(status, base);
      } else {
        status.textContent = `${hits.length} result${hits.length === 1 ? "" : "s"}${hits.length === LIMIT ? " (best first)" : ""}`;
      }
    }

    input.addEventListener("input", settled(run));
    input.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown" && hits.length) { event.preventDefault(); select((active + 1) % hits.length); }
      else if (event.key === "ArrowUp" && hits.length) { event.preventDefault(); select((active - 1 + hits.length) % hits.length); }
      else if (event.key === "Escape") { event.preventDefault(); show(false); root.classList.remove("kb-search--open"); input.blur(); }
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const item = list.querySelectorAll(".kb-search__item")[active];
      if (item) { location.href = item.dataset.href; return; }
      // with no result, the search page (which says so and offers the doctor), the query in the
      // address's fragment: a fragment is never sent to the server (a GET submit would put the
      // pasted line, host names and all, in the query string and the host's access log)
      const url = new URL(form.action, location.href);
      url.search = "";
      url.hash = new URLSearchParams({ q: input.value }).toString();
      location.href = url.href;
    });
    list.addEventListener("click", (event) => {
      const item = event.target.closest(".kb-search__item");
      if (!item) return;
      if (event.ctrlKey || event.metaKey || event.shiftKey) window.open(item.dataset.href, "_blank", "noopener");
      else location.href = item.dataset.href;
    });
    list.addEventListener("auxclick", (event) => {
      const item = event.target.closest(".kb-search__item");
      if (item && event.button === 1) window.open(item.dataset.href, "_blank", "noopener");
    });
    opener.addEventListener("click", () => {
      root.classList.add("kb-search--open");
      opener.setAttribute("aria-expanded", "true");
      input.focus();
    });
    closer.addEventListener("click", () => {
      root.classList.remove("kb-search--open");
      opener.setAttribute("aria-expanded", "false");
      show(false);
      opener.focus();
    });
    document.addEventListener("click", (event) => {
      if (!root.contains(event.target)) show(false);
    });
    input.addEventListener("focus", () => { if (input.value.trim() && hits.length) show(true); });
    document.addEventListener("keydown", (event) => {
      if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target;
      if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
      event.preventDefault();
      root.classList.add("kb-search--open");
      input.focus();
    });
  }

  // A long paste costs a search per keystroke (about 0.2 s for a 10,000-character line): a query
  // longer than SETTLE_CHARS is searched once typing pauses for SETTLE_MS; shorter ones at once.
  const SETTLE_CHARS = 1000, SETTLE_MS = 150;
  function settled(run) {
    let timer = 0;
    return (event) => {
      clearTimeout(timer);
      if ((event.target.value || "").length <= SETTLE_CHARS) run();
      else timer = setTimeout(run, SETTLE_MS);
    };
  }

  // The query a search page's address holds: in the fragment (/search/#q=...), which the browser
  // never sends to the server; ?q= is still read for links made before.
  function addressQuery() {
    const fragment = new URLSearchParams(location.hash.slice(1)).get("q");
    return fragment !== null ? fragment : new URLSearchParams(location.search).get("q");
  }

  function keepQuery(query) {
    const url = new URL(location.href);
    url.search = "";
    url.hash = new URLSearchParams({ q: query }).toString();
    history.replaceState(null, "", url);
  }

  // the search page (/search/#q=...): the same ranking, more results, shareable
  function mountPage(root, index_url, base) {
    const input = root.querySelector("input");
    const list = root.querySelector("ol");
    const status = root.querySelector(".kb-search-page__status");
    // on the 404 page, a first guess from the missing address: /entries/xid-79x/ -> "xid 79x"
    const fromPath = root.dataset.fromPath === "true";
    const segment = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
    const guess = fromPath && segment !== "404.html" ? segment.replace(/\.[a-z]+$/, "").replace(/[-_]+/g, " ") : "";
    input.value = addressQuery() || guess;
    // an old ?q= link: the query moves to the fragment, so that later requests from this page
    // (the index, a result) cannot carry it in their Referer even where a host sets no policy
    if (!fromPath && new URLSearchParams(location.search).has("q")) keepQuery(input.value);
    async function run() {
      const query = input.value;
      if (!query.trim()) { list.replaceChildren(); status.textContent = "Type or paste an error message."; return; }
      let index;
      try { index = await loadIndex(index_url); } catch (err) { status.textContent = `Search is unavailable: ${err.message}.`; return; }
      const hits = index.search(query, 30);
      list.replaceChildren(...hits.map((hit, i) => resultItem(hit, base, `kb-search-page-r${i}`, false, false)));
      status.replaceChildren();
      if (hits.length && weak(hits, query)) weakNote(status, base);
      else if (hits.length) status.textContent = `${hits.length} result${hits.length === 1 ? "" : "s"} for the text above, best first.`;
      else status.append("Nothing matches. For a whole log, try the ", el("a", { href: base + "diagnose/", text: "log doctor" }), ".");
    }
    const search = settled(run);
    input.addEventListener("input", (event) => {
      // the search page keeps the query in its address's fragment; a 404 address stays as it was
      if (!fromPath) keepQuery(input.value);
      search(event);
    });
    run();
  }

  function mount() {
    const box = document.querySelector(".kb-search");
    if (!box) return;
    if (!box.dataset.mounted) { box.dataset.mounted = "1"; mountBox(box); }
    const page = document.querySelector(".kb-search-page");
    if (page && !page.dataset.mounted) {
      page.dataset.mounted = "1";
      mountPage(page, box.dataset.index, siteBase(box));
    }
  }

  window.kbSearch = { Index, words, meaningful, toRegExp, weak, load: loadIndex };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
