// Xid comparison page: sort any column, filter, compare two to four codes side by side.
// Plain JavaScript; the state lives in the address bar so a link reopens the same view.
(function () {
  "use strict";

  const SEVERITY_RANK = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };
  const MAX_COMPARE = 4;
  const script = document.currentScript;
  const DATA_URL = new URL("../data/xid.json", script ? script.src : location.href);

  const el = window.kbDom.el; // text-only DOM builder (kb-dom.js)

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
    const picks = () => Array.from(root.querySelectorAll(".kb-xid__pick:checked")).map((box) => box.value)
      .sort((a, b) => Number(a) - Number(b));
    let sort = { column: 1, dir: "asc" };
    let data = null;
    controls.hidden = false;

    // sortable headers: each becomes a button (keyboard-friendly), aria-sort shows the state
    const headers = Array.from(table.tHead.rows[0].cells);
    headers.forEach((th, index) => {
      if (index === 0) return;
      const button = el("button", { type: "button", class: "kb-xid__sort", text: th.textContent });
      th.replaceChildren(button);
      button.addEventListener("click", () => {
        sort = { column: index, dir: sort.column === index && sort.dir === "asc" ? "desc" : "asc" };
        apply();
      });
    });

    function key(row, index) {
      const cell = row.cells[index];
      const type = headers[index].dataset.type;
      const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
      return type === "number" || type === "severity" || cell.dataset.sort !== undefined ? Number(raw) : raw.toLowerCase();
    }

    function apply(push = true) {
      const words = q.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      for (const row of rows) {
        const text = row.textContent.toLowerCase();
        const visible = words.every((w) => text.includes(w) || row.dataset.code === w)
          && (!origin.value || row.dataset.origin.split(" ").includes(origin.value))
          && (!action.value || row.dataset.action === action.value)
          && (!severity.value || row.dataset.severity === severity.value);
        row.hidden = !visible;
        if (visible) shown++;
      }
      const sorted = rows.slice().sort((a, b) => {
        const ka = key(a, sort.column), kb = key(b, sort.column);
        const cmp = typeof ka === "number" && typeof kb === "number" ? ka - kb : String(ka).localeCompare(String(kb));
        return (sort.dir === "asc" ? cmp : -cmp) || Number(a.dataset.code) - Number(b.dataset.code);
      });
      body.append(...sorted);
      headers.forEach((th, index) => {
        if (index === 0) return;
        th.setAttribute("aria-sort", index === sort.column ? (sort.dir === "asc" ? "ascending" : "descending") : "none");
      });
      count.textContent = `${shown} of ${rows.length} codes`;
      renderCompare();
      if (push) saveState();
    }

    function saveState() {
      const params = new URLSearchParams();
      if (q.value.trim()) params.set("q", q.value.trim());
      if (origin.value) params.set("origin", origin.value);
      if (action.value) params.set("action", action.value);
      if (severity.value) params.set("severity", severity.value);
      if (picks().length) params.set("compare", picks().join(","));
      if (sort.column !== 1 || sort.dir !== "asc") params.set("sort", `${sort.column}:${sort.dir}`);
      const search = params.toString();
      history.replaceState(null, "", search ? `?${search}` : location.pathname);
    }

    function loadState() {
      const params = new URLSearchParams(location.search);
      q.value = params.get("q") || "";
      for (const [select, name] of [[origin, "origin"], [action, "action"], [severity, "severity"]]) {
        const value = params.get(name) || "";
        if (Array.from(select.options).some((o) => o.value === value)) select.value = value;
      }
      const wanted = (params.get("compare") || "").split(",").filter(Boolean).slice(0, MAX_COMPARE);
      root.querySelectorAll(".kb-xid__pick").forEach((box) => { box.checked = wanted.includes(box.value); });
      const [column, dir] = (params.get("sort") || "1:asc").split(":");
      if (Number(column) >= 1 && Number(column) < headers.length) sort = { column: Number(column), dir: dir === "desc" ? "desc" : "asc" };
    }

    async function renderCompare() {
      const codes = picks();
      if (codes.length < 2) {
        panel.hidden = codes.length === 0;
        panel.replaceChildren(codes.length === 1 ? el("p", { text: "Tick one to three more codes to compare them side by side." }) : "");
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
      }
      const byCode = Object.fromEntries(data.map((item) => [String(item.code), item]));
      const items = codes.map((c) => byCode[c]).filter(Boolean);
      const fields = [
        ["Name", (x) => x.name],
        ["Mnemonic", (x) => x.mnemonic || ""],
        ["Meaning", (x) => x.meaning],
        ["Severity", (x) => x.severity],
        ["Origin", (x) => x.origin.join(", ")],
        ["Immediate action", (x) => x.immediate_action || ""],
        ["Investigatory action", (x) => x.investigatory_action || ""],
        ["Reset required", (x) => (x.reset_required === null ? "not stated" : x.reset_required ? "yes" : "no")],
        ["GPUs", (x) => x.applies_to.join(", ")],
        ["Legacy causes", (x) => x.legacy_causes.join(", ")],
        ["Operators", (x) => x.operators.map((o) => `${o.tool}: ${o.treatment}${o.disagrees ? " (differs from NVIDIA)" : ""}`).join(" · ")],
      ];
      const head = el("tr", {}, el("th", { scope: "col", text: "" }),
        ...items.map((x) => el("th", { scope: "col" }, el("a", { href: new URL(x.path, DATA_URL.href.replace(/data\/xid\.json$/, "")).href, text: `Xid ${x.code}` }))));
      const rowsOut = fields.map(([label, get]) => {
        const values = items.map(get);
        const differs = new Set(values).size > 1;
        return el("tr", { class: differs ? "kb-xid__differs" : null }, el("th", { scope: "row", text: label }),
          ...values.map((v) => el("td", { text: v })));
      });
      const compareTable = el("table", { class: "kb-xid__compare-table" }, el("thead", {}, head), el("tbody", {}, ...rowsOut));
      const clear = el("button", { type: "button", class: "md-button", text: "Clear comparison" });
      clear.addEventListener("click", () => {
        root.querySelectorAll(".kb-xid__pick").forEach((box) => { box.checked = false; });
        apply();
      });
      panel.hidden = false;
      panel.replaceChildren(el("h2", { text: `Comparing ${items.map((x) => `Xid ${x.code}`).join(", ")}` }),
        el("p", { class: "kb-xid__hint", text: "Rows where the codes differ are highlighted." }),
        el("div", { class: "kb-xid__scroll" }, compareTable), clear);
    }

    root.addEventListener("change", (event) => {
      if (event.target.classList.contains("kb-xid__pick") && picks().length > MAX_COMPARE) {
        event.target.checked = false;
        count.textContent = `Compare at most ${MAX_COMPARE} codes at once.`;
        return;
      }
      apply();
    });
    q.addEventListener("input", () => apply());
    loadState();
    apply(false);
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
