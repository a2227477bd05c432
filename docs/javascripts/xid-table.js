// Xid comparison page: sort by a column, filter, compare two to four codes side by side.
// Plain JavaScript; the state lives in the address bar so a link reopens the same view.
(function () {
  "use strict";

  const MAX_COMPARE = 4;
  const DEFAULT_SORT = { key: "code", dir: "asc" };
  // sort=<column number> from the page's first layout, so old links keep their order
  const LEGACY_SORT = { 1: "code", 2: "name", 3: "meaning", 5: "action", 7: "reset", 10: "severity" };
  const script = document.currentScript;
  const DATA_URL = new URL("../data/xid.json", script ? script.src : location.href);
  const SITE_URL = new URL("../", DATA_URL);

  const el = window.kbDom.el; // text-only DOM builder (kb-dom.js)

  // a mnemonic or action as <code>, breakable only after an underscore
  function codeEl(text) {
    const node = el("code");
    String(text).split("_").forEach((part, i, parts) => {
      node.append(part);
      if (i < parts.length - 1) node.append("_", el("wbr"));
    });
    return node;
  }

  // one line of Markdown prose, its code spans breakable after underscores (kb-dom.js)
  const prose = (text) => window.kbDom.prose(text, codeEl);

  function mount(root) {
    const table = root.querySelector(".kb-xid__table");
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    const controls = root.querySelector(".kb-xid__controls");
    const q = root.querySelector(".kb-xid__q");
    const origin = root.querySelector(".kb-xid__origin");
    const action = root.querySelector(".kb-xid__action");
    const severity = root.querySelector(".kb-xid__severity");
    const count = root.querySelector(".kb-xid__count");
    const panel = root.querySelector(".kb-xid__compare");
    const boxes = Array.from(root.querySelectorAll(".kb-xid__pick"));
    const searchText = new Map(rows.map((row) => [row, row.textContent.toLowerCase()]));
    const picks = () => boxes.filter((box) => box.checked).map((box) => box.value)
      .sort((a, b) => Number(a) - Number(b));
    let sort = { ...DEFAULT_SORT };
    let data = null;
    let renderId = 0;
    controls.hidden = false;

    // a bar that stays at the bottom of the screen while codes are ticked
    const trayText = el("span", { class: "kb-xid__tray-text" });
    const trayShow = el("button", { type: "button", class: "kb-xid__button kb-xid__button--primary", text: "Show comparison" });
    const trayClear = el("button", { type: "button", class: "kb-xid__button", text: "Clear" });
    const tray = el("div", { class: "kb-xid__tray", hidden: true }, trayText, trayShow, trayClear);
    root.append(tray);
    trayShow.addEventListener("click", () => {
      panel.scrollIntoView({ block: "start" });
      panel.focus({ preventScroll: true });
    });
    trayClear.addEventListener("click", () => setPicks([]));

    // sortable headers: each becomes a button (keyboard-friendly), aria-sort shows the state
    const headers = Array.from(table.tHead.rows[0].cells);
    const columns = {};
    headers.forEach((th, index) => {
      const name = th.dataset.key;
      if (!name) return;
      columns[name] = index;
      const button = el("button", { type: "button", class: "kb-xid__sort", text: th.textContent });
      th.replaceChildren(button);
      button.addEventListener("click", () => {
        sort = { key: name, dir: sort.key === name && sort.dir === "asc" ? "desc" : "asc" };
        apply();
      });
    });

    function key(row, name) {
      const cell = row.cells[columns[name]];
      if (headers[columns[name]].dataset.type === "number") return Number(cell.dataset.sort);
      return (cell.querySelector(".kb-xid__meaning") || cell).textContent.trim().toLowerCase();
    }

    function apply(save = true) {
      const words = q.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      for (const row of rows) {
        const text = searchText.get(row);
        const visible = words.every((w) => text.includes(w) || row.dataset.code === w)
          && (!origin.value || row.dataset.origin.split(" ").includes(origin.value))
          && (!action.value || row.dataset.action === action.value)
          && (!severity.value || row.dataset.severity === severity.value);
        if (row.hidden === visible) row.hidden = !visible;
        if (visible) shown++;
      }
      const sorted = rows.slice().sort((a, b) => {
        const ka = key(a, sort.key), kb = key(b, sort.key);
        const cmp = typeof ka === "number" ? ka - kb : ka.localeCompare(kb);
        return (sort.dir === "asc" ? cmp : -cmp) || Number(a.dataset.code) - Number(b.dataset.code);
      });
      // move rows only when the order changed: a moved row loses a click in progress
      if (sorted.some((row, i) => body.rows[i] !== row)) body.append(...sorted);
      headers.forEach((th) => {
        if (!th.dataset.key) return;
        th.setAttribute("aria-sort", th.dataset.key === sort.key ? (sort.dir === "asc" ? "ascending" : "descending") : "none");
      });
      count.textContent = `${shown} of ${rows.length} codes`;
      if (save) saveState();
    }

    function saveState() {
      const params = new URLSearchParams();
      if (q.value.trim()) params.set("q", q.value.trim());
      if (origin.value) params.set("origin", origin.value);
      if (action.value) params.set("action", action.value);
      if (severity.value) params.set("severity", severity.value);
      if (picks().length) params.set("compare", picks().join(","));
      if (sort.key !== DEFAULT_SORT.key || sort.dir !== DEFAULT_SORT.dir) params.set("sort", `${sort.key}:${sort.dir}`);
      const search = params.toString();
      history.replaceState(history.state, "", (search ? `?${search}` : location.pathname) + location.hash);
    }

    function loadState() {
      const params = new URLSearchParams(location.search);
      q.value = params.get("q") || "";
      for (const [select, name] of [[origin, "origin"], [action, "action"], [severity, "severity"]]) {
        const value = params.get(name) || "";
        if (Array.from(select.options).some((o) => o.value === value)) select.value = value;
      }
      const wanted = (params.get("compare") || "").split(",").filter(Boolean).slice(0, MAX_COMPARE);
      boxes.forEach((box) => { box.checked = wanted.includes(box.value); });
      let [name, dir] = (params.get("sort") || "").split(":");
      if (LEGACY_SORT[name]) name = LEGACY_SORT[name];
      if (name in columns) sort = { key: name, dir: dir === "desc" ? "desc" : "asc" };
    }

    function setPicks(codes) {
      boxes.forEach((box) => { box.checked = codes.includes(box.value); });
      picksChanged(null);
    }

    // a tick changes only the comparison: the table keeps its order and the page its place
    async function picksChanged(anchor) {
      const before = anchor ? anchor.getBoundingClientRect().top : null;
      saveState();
      await renderCompare();
      if (anchor) {
        const shift = anchor.getBoundingClientRect().top - before;
        if (Math.abs(shift) >= 1) window.scrollBy(0, shift);
      }
    }

    const FIELDS = [
      ["Name", (x) => x.name, (x) => el("a", { href: new URL(x.path, SITE_URL).href, text: x.name })],
      ["Mnemonic", (x) => x.mnemonic || "", (x) => (x.mnemonic ? codeEl(x.mnemonic) : "none")],
      ["Meaning", (x) => x.meaning, (x) => prose(x.meaning)],
      ["Severity", (x) => x.severity, (x) => el("span", { class: `kb-badge kb-sev-${x.severity}`, text: x.severity })],
      ["Origin", (x) => x.origin.join(", "), (x) => x.origin.join(", ") || "not stated"],
      ["Immediate action", (x) => x.immediate_action || "", (x) => (x.immediate_action ? codeEl(x.immediate_action) : "none given")],
      ["Investigatory action", (x) => x.investigatory_action || "", (x) => (x.investigatory_action ? codeEl(x.investigatory_action) : "none given")],
      ["Reset required", (x) => String(x.reset_required), (x) => (x.reset_required === null ? "not stated" : x.reset_required ? "yes" : "no")],
      ["GPUs", (x) => x.applies_to.join(", "), (x) => x.applies_to.join(", ") || "not stated"],
      ["Legacy causes", (x) => x.legacy_causes.join(", "), (x) => x.legacy_causes.join(", ") || "none"],
      ["Operational tools", (x) => JSON.stringify(x.operators.map((o) => [o.tool, o.treatment, o.disagrees])), (x) => (x.operators.length
        ? el("ul", {}, ...x.operators.map((o) => el("li", { class: o.disagrees ? "kb-xid__op--differs" : null },
          el("strong", { text: o.tool }), o.disagrees ? " " : "", o.disagrees ? el("span", { class: "kb-xid__differs-tag", text: "differs from NVIDIA" }) : "",
          ": ", prose(o.treatment))))
        : "none recorded")],
    ];

    async function renderCompare() {
      const id = ++renderId;
      const codes = picks();
      tray.hidden = codes.length === 0;
      trayShow.hidden = codes.length < 2;
      trayText.textContent = codes.length === 1
        ? `Xid ${codes[0]} ticked: tick one to three more to compare.`
        : `Comparing ${codes.length}: ${codes.map((c) => `Xid ${c}`).join(", ")}`;
      if (codes.length < 2) {
        panel.hidden = true;
        panel.replaceChildren();
        return;
      }
      if (!data) {
        try {
          data = (await (await fetch(DATA_URL)).json()).codes;
        } catch (err) {
          panel.hidden = false;
          panel.replaceChildren(el("p", { text: "Could not load xid.json for the comparison." }));
          return;
        }
        if (id !== renderId) return; // a later tick is drawing already
      }
      const byCode = Object.fromEntries(data.map((item) => [String(item.code), item]));
      const items = codes.map((c) => byCode[c]).filter(Boolean);
      const head = el("tr", {}, el("th", { scope: "col", class: "kb-xid__corner", text: "Field" }),
        ...items.map((x) => el("th", { scope: "col" }, el("a", { href: new URL(x.path, SITE_URL).href, text: `Xid ${x.code}` }))));
      let differing = 0;
      const rowsOut = FIELDS.map(([label, same, show]) => {
        const keys = items.map(same);
        if (keys.every((k) => k === "" || k === "[]")) return null; // nothing to say for any of them
        const differs = new Set(keys).size > 1;
        if (differs) differing++;
        const th = el("th", { scope: "row" }, label);
        if (differs) th.append(" ", el("span", { class: "kb-xid__differs-tag", text: "differs" }));
        return el("tr", { class: differs ? "kb-xid__differs" : null }, th,
          ...items.map((x) => el("td", { "data-label": `Xid ${x.code}` }, el("div", {}, show(x)))));
      }).filter(Boolean);
      const chips = el("ul", { class: "kb-xid__chips", "aria-label": "Codes in the comparison" }, ...items.map((x) => {
        const remove = el("button", { type: "button", class: "kb-xid__button kb-xid__chip", "aria-label": `Remove Xid ${x.code} from the comparison` },
          `Xid ${x.code} `, el("span", { "aria-hidden": "true", text: "✕" }));
        remove.addEventListener("click", () => setPicks(picks().filter((c) => c !== String(x.code))));
        return el("li", {}, remove);
      }));
      const clear = el("button", { type: "button", class: "kb-xid__button", text: "Clear comparison" });
      clear.addEventListener("click", () => setPicks([]));
      panel.hidden = false;
      panel.replaceChildren(
        el("h2", { text: `Comparing ${items.map((x) => `Xid ${x.code}`).join(", ")}` }),
        chips,
        el("p", { class: "kb-xid__hint", text: differing
          ? `${differing} of ${rowsOut.length} fields differ; they are marked “differs”.`
          : "These codes agree on every field." }),
        el("table", { class: `kb-xid__compare-table kb-xid__compare-table--${items.length}` },
          el("thead", {}, head), el("tbody", {}, ...rowsOut)),
        clear);
    }

    root.addEventListener("change", (event) => {
      const target = event.target;
      if (target.classList.contains("kb-xid__pick")) {
        if (target.checked && picks().length > MAX_COMPARE) {
          target.checked = false;
          count.textContent = `Compare at most ${MAX_COMPARE} codes at once: untick one first.`;
          return;
        }
        picksChanged(target);
      } else if (target.tagName === "SELECT") {
        apply();
      }
      // the search box is handled on input; its change event (fired on blur) must not re-sort
    });
    q.addEventListener("input", () => apply());
    loadState();
    apply(false);
    renderCompare();
  }

  function start() {
    // only the comparison page's container: an entry's "Xid 79" badge shares the class name
    document.querySelectorAll("div.kb-xid:not([data-mounted])").forEach((root) => {
      if (!root.querySelector(".kb-xid__table")) return;
      root.dataset.mounted = "true";
      mount(root);
    });
  }

  if (typeof document$ !== "undefined") document$.subscribe(start);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
