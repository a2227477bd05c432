// GPU Failure Atlas log doctor: the widget on /diagnose/ and the compact box on entry pages.
// Python (Pyodide) is loaded from this site, in a module worker: on /diagnose/ once the page is
// idle, on entry pages only when the reader first uses the box. The log is read in pieces and
// streamed to the worker; it never leaves the browser.
(function () {
  "use strict";

  const script = document.currentScript;
  const SITE = new URL("../", script ? script.src : location.href); // javascripts/ sits at the site root
  const CHUNK = 1 << 20; // bytes per piece sent to the worker
  // A paste longer than this is read as a chosen file would be, not put in the text box: a
  // text box holding 50 MB takes Chromium over 20 s and 3 GB to lay out, and again on each redraw
  const PASTE_AS_FILE_CHARS = 1 << 20;
  // Cancel stops between pieces; a worker busy with one piece longer than this (a small archive
  // that unpacks to gigabytes) is stopped and a fresh one is started on the next use
  const CANCEL_GRACE_MS = 1000;
  const params = new URLSearchParams(location.search);
  const BOOT_TIMEOUT_MS = Number(params.get("doctor_timeout")) || 60000;
  const SAMPLES_URL = new URL("assets/doctor/samples.json", SITE);

  // ---- one worker per page, started on first use --------------------------------------
  let booting = null;
  const progressListeners = new Set();  // each box shows the start-up steps while it waits
  let lastProgress = null;

  function bootWorker() {
    if (booting) return booting;
    const started = booting = new Promise((resolve, reject) => {
      let worker;
      try {
        worker = new Worker(new URL("assets/doctor/worker.mjs", SITE), { type: "module" });
      } catch (err) {
        reject(new Error(`the browser refused to start the worker (${err.message})`));
        return;
      }
      const timer = setTimeout(() => {
        worker.terminate();
        reject(new Error(`Python did not start within ${Math.round(BOOT_TIMEOUT_MS / 1000)} s. ` +
          "WebAssembly may be blocked by the browser or an extension."));
      }, BOOT_TIMEOUT_MS);
      worker.onmessage = (event) => {
        const msg = event.data;
        if (msg.type === "progress") {
          lastProgress = msg;
          for (const listener of progressListeners) listener(msg);
        } else if (msg.type === "ready") {
          clearTimeout(timer);
          window.kbDoctorTimings = msg.timings; // read by the browser benchmark
          lastProgress = null;
          // a worker that is stopped or dies is not handed out again: the next use starts a new one
          resolve(new Channel(worker, () => { if (booting === started) booting = null; }));
        } else if (msg.type === "error") {
          clearTimeout(timer);
          worker.terminate();
          reject(new Error(`Python could not start: ${msg.message}`));
        }
      };
      worker.onerror = (event) => {
        clearTimeout(timer);
        worker.terminate();
        // a worker script that cannot be fetched gives an event with no message: say the likely cause
        const offline = navigator.onLine === false ? " (this browser is offline)" : "";
        reject(new Error(`Python could not start: ${event.message || `the doctor's worker script could not be downloaded${offline}; ` +
          "check the connection to this site and retry"}`));
      };
      worker.postMessage({ type: "boot", site: SITE.href });
    });
    started.catch(() => { lastProgress = null; if (booting === started) booting = null; }); // allow a retry
    return started;
  }

  // The /diagnose/ page exists to run the doctor: Python starts as soon as the page is idle,
  // while the reader finds and pastes a log, unless the browser asks to save data. Entry pages'
  // compact boxes load nothing until they are used.
  function preload(warm) {
    if (navigator.connection && navigator.connection.saveData) return;
    const idle = () => (window.requestIdleCallback ? requestIdleCallback(warm, { timeout: 2000 }) : setTimeout(warm, 200));
    if (document.readyState === "complete") idle();
    else window.addEventListener("load", idle, { once: true });
  }

  // Request/response over the worker, one message at a time (the caller awaits each reply).
  // Boxes on one page share the worker and its one Python session: a box waits for its turn
  // (`acquire`) rather than interleave its messages with another's.
  class Channel {
    constructor(worker, onDead) {
      this.worker = worker;
      this.pending = null;
      this.dead = null;
      this.onDead = onDead;
      this.queue = Promise.resolve();
      this.users = 0;  // boxes holding the worker or waiting for it
      worker.onmessage = (event) => {
        const pending = this.pending;
        this.pending = null;
        if (!pending) return;
        if (event.data.type === "error") pending.reject(new Error(event.data.message));
        else pending.resolve(event.data);
      };
      // the worker failing after start-up (it ran out of memory, the browser stopped it)
      worker.onerror = (event) => this.kill(new Error(`the log doctor stopped (${event.message || "its worker failed"}); try again`));
    }
    acquire() {
      let release;
      this.users += 1;
      const turn = new Promise((resolve) => { release = () => { this.users -= 1; resolve(); }; });
      const ready = this.queue.then(() => release);
      this.queue = this.queue.then(() => turn);
      return ready;
    }
    send(message, transfer) {
      if (this.dead) return Promise.reject(this.dead);
      return new Promise((resolve, reject) => {
        this.pending = { resolve, reject };
        this.worker.postMessage(message, transfer || []);
      });
    }
    // stops the worker at once, whatever it is doing: the waiting call fails with ``reason``
    kill(reason) {
      if (this.dead) return;
      this.dead = reason;
      this.worker.terminate();
      this.onDead();
      const pending = this.pending;
      this.pending = null;
      if (pending) pending.reject(reason);
    }
  }

  // ---- input sources --------------------------------------------------------------------
  // Pasted text, encoded to UTF-8 a piece at a time (a whole 200 MB paste encoded at once held
  // the main thread for seconds and a second copy of the log). ``size`` and positions count
  // UTF-16 code units; a piece never ends between the two halves of a surrogate pair.
  function textSource(text, name) {
    const encoder = new TextEncoder();
    return {
      name, size: text.length,
      read: async (pos, len) => {
        let end = Math.min(pos + len, text.length);
        const last = text.charCodeAt(end - 1);
        if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
        const bytes = encoder.encode(text.slice(pos, end));
        return { buffer: bytes.buffer, consumed: end - pos };
      },
    };
  }

  // files dropped or chosen, folders walked: every file inside, named by its path in the folder,
  // at most MAX_DROPPED of them (the matcher's own bound on the files of one input)
  const MAX_DROPPED = 10000;
  async function droppedFiles(transfer) {
    if (!transfer) return [];
    const entries = Array.from(transfer.items || []).map((item) => item.webkitGetAsEntry && item.webkitGetAsEntry()).filter(Boolean);
    if (!entries.length) return Array.from(transfer.files || []);
    const out = [];
    out.passed = 0;  // files past MAX_DROPPED: counted (up to a bound), not read, and said in the report
    const walk = async (entry) => {
      if (out.length >= MAX_DROPPED) {
        if (entry.isFile) out.passed += 1;
        if (out.passed >= MAX_DROPPED * 10) return;  // a whole disk dropped: stop counting too
      }
      if (entry.isFile) {
        if (out.length >= MAX_DROPPED) return;
        const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
        out.push(new File([file], entry.fullPath.replace(/^\//, ""), { lastModified: file.lastModified }));
      } else if (entry.isDirectory) {
        const reader = entry.createReader();
        for (;;) {
          const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
          if (!batch.length) break;
          for (const child of batch) await walk(child);
        }
      }
    };
    for (const entry of entries) await walk(entry);
    return out;
  }

  function fileSource(file) {
    return {
      name: file.webkitRelativePath || file.name, size: file.size, file: true,
      read: async (pos, len) => {
        const buffer = await file.slice(pos, pos + len).arrayBuffer();
        return { buffer, consumed: buffer.byteLength };
      },
    };
  }

  // why a chosen file could not be read (Chromium's own message blames permissions)
  const unreadable = (name, err) => (err && err.name === "NotReadableError"
    ? `${name} could not be read: it changed or was removed after it was chosen`
    : `${name} could not be read (${err && err.message ? err.message : err})`);

  const el = window.kbDom.el; // text-only DOM builder (kb-dom.js)

  // Log text as the text and Markdown reports show it (report.py, visible): control characters and
  // the bidirectional overrides written out ("\u202e"), so a line cannot reorder what is displayed
  const INVISIBLE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  const shown = (text) => String(text).replace(INVISIBLE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });

  function formatBytes(n) {
    if (n < 1024) return `${n} B`;
    if (n < 1 << 20) return `${(n / 1024).toFixed(0)} KB`;
    return `${(n / (1 << 20)).toFixed(1)} MB`;
  }

  let copyCount = 0;
  function commandBlock(command) {
    const id = `kb-doctor-cmd-${++copyCount}`;
    const code = el("code", { id, text: command, tabindex: "0" });
    const button = el("button", { type: "button", class: "kb-doctor__copy-cmd", text: "Copy",
      "aria-label": `Copy the command: ${command.slice(0, 60)}` });
    button.addEventListener("click", async () => {
      let ok = false;
      try { await navigator.clipboard.writeText(command); ok = true; } catch (err) {
        const range = document.createRange();
        range.selectNodeContents(code);
        const sel = getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        ok = Boolean(document.execCommand && document.execCommand("copy"));
      }
      button.textContent = ok ? "Copied" : "Select and copy";
      setTimeout(() => { button.textContent = "Copy"; }, 2000);
    });
    return el("div", { class: "kb-doctor__command" }, el("pre", {}, code), button);
  }

  function whereText(where) {
    const parts = [];
    if (where.host) parts.push(`host ${where.host}`);
    if (where.rank !== undefined) parts.push(`rank ${where.rank}`);
    if (where.pci) parts.push(`GPU ${where.pci}`);
    if (where.device) parts.push(`PCI device ${where.device}`);
    if (where.time) parts.push(`at ${where.time}`);
    return parts.join(", ");
  }

  const plural = (n, word, many) => `${n.toLocaleString()} ${n === 1 ? word : many || `${word}s`}`;

  // `page`: what the page knows of its inputs: `label` (what was read, for the heading: a file's
  // name, "the pasted log"; none for the text in the box), `empty` (every input was empty) and
  // `notes` (sentences: one of several inputs that is empty, files of a dropped folder left
  // unread; an input that looks binary is said by the matcher's own note, read.looks_binary)
  function renderReport(report, compact, page) {
    page = page || {};
    const box = el("div", { class: "kb-doctor__report" });
    const failures = report.findings.filter((f) => f.role !== "info");
    const sources = report.sources || [];
    const files = sources.length > 1 ? ` of ${sources.length} files` : page.label ? ` of ${page.label}` : "";
    // a line's place: "line 12", or "node-3/kern.log:12" when the report covers several files
    const at = (source, line) => (sources.length > 1 && sources[source] ? `${sources[source].name}:${line}` : `line ${line}`);
    const hang = report.verdict.startsWith("hang: ");
    const lines = plural(report.input.lines, "line");
    const head = page.empty ? `Nothing to read: ${page.empty}.`
      : hang ? `Hang: ${report.verdict.slice(6)}`
        : failures.length
          ? `${plural(failures.length, "failure")} found in ${lines}${files}`
          : `No known failure found in ${lines}${files}.`;
    box.append(el("h2", { class: "kb-doctor__verdict", text: head, tabindex: "-1" }));
    const titles = Object.fromEntries(report.findings.map((f) => [f.id, window.kbDom.plainTitle(f.title)]));
    if (report.initiating) {
      const place = { ...report.initiating };
      delete place.time; // the finding cards give the time; this line says who failed first
      const first = whereText(place);
      const line = report.initiating.line !== undefined ? ` (${at(report.initiating.source, report.initiating.line)})` : "";
      if (first) box.append(el("p", { class: "kb-doctor__first", text: `Failed first: ${first}${line}` }));
    }
    if ((report.nodes || []).length > 1) {
      const list = el("ul", { class: "kb-doctor__nodes" });
      for (const n of report.nodes) {
        const rank = n.rank !== undefined ? `, rank ${n.rank}` : "";
        const when = n.time ? ` at ${n.time}` : "";
        list.append(el("li", { text: `${n.host}${rank}: ${titles[n.first] || n.first}${when} (${at(n.source, n.line)})` }));
      }
      box.append(el("p", { class: "kb-doctor__meta", text: "What each node saw first:" }), list);
    }
    // the report's own notes, as the text and Markdown reports print them (report.py: a damaged
    // archive, an input that looks binary, lines over 64 KiB read at both ends); the heading
    // already says that every input was empty
    const notes = (report.notes || []).filter((note) => !(page.empty && /^the input is empty\b/.test(note)));
    for (const note of notes) box.append(el("p", { class: "kb-doctor__meta", text: `Note: ${note}` }));
    // what the page saw of its inputs (by name): what the matcher cannot know (one of several
    // files empty, files of a dropped folder left unread)
    for (const note of page.notes || []) {
      box.append(el("p", { class: "kb-doctor__meta kb-doctor__input-note", text: `Note: ${note}` }));
    }
    if (report.recovery_action) {
      box.append(el("p", { text: `NVIDIA's recovery action for this GPU (Xid 154): ${report.recovery_action}` }));
    }
    // the lines that read like known failures (closest wording), as leads: when no signature
    // matched, or only wrappers' (a worker failed, a process crashed), which name no cause
    const leads = hang ? [] : report.resembles || [];
    if (leads.length) {
      box.append(el("p", { class: "kb-doctor__meta", text: failures.length
        ? "The failures found only say that a process stopped; these lines read like failures the atlas knows (closest wording; a lead to check, not a diagnosis):"
        : "No signature matched, but these lines read like failures the atlas knows (closest wording; a lead to check, not a diagnosis):" }));
      for (const r of leads) {
        const card = el("article", { class: "kb-doctor__finding kb-doctor__finding--resembles" });
        const title = el(r.url ? "a" : "span", { href: r.url || null }, window.kbDom.title(r.title));
        card.append(el("h3", {}, el("span", { class: "kb-badge kb-role kb-role-resembles", text: "resembles" }), " ", title));
        card.append(el("p", { class: "kb-doctor__meta", text: `similarity ${r.similarity.toFixed(2)} · ${at(r.source, r.line)} · shared words: ${r.shared_words.join(", ")}` }));
        const pre = el("pre", { class: "kb-doctor__evidence" });
        const code = el("code", { tabindex: "0", "aria-label": `Line resembling ${window.kbDom.plainTitle(r.title)}` });
        code.append(el("span", { class: "kb-doctor__lineno", text: sources.length > 1 ? at(r.source, r.line) : `${r.line}` }), ` ${shown(r.text)}\n`);
        pre.append(code);
        card.append(pre);
        box.append(card);
      }
    }
    for (const f of report.findings) {
      const card = el("article", { class: `kb-doctor__finding kb-doctor__finding--${f.role}` });
      const title = el(f.url ? "a" : "span", { href: f.url || null }, window.kbDom.title(f.title));
      card.append(el("h3", {},
        el("span", { class: `kb-badge kb-role kb-role-${f.role}`, text: f.heading }), " ", title));
      const meta = [`severity ${f.severity}`, `seen ${f.count}×`, `first on ${at(f.source, f.first_line)}`];
      const where = whereText(f.where);
      if (where) meta.push(where);
      if (f.fields && f.fields.joined) meta.push(`a line wrapped in two, read with line ${f.fields.joined} joined to it`);
      card.append(el("p", { class: "kb-doctor__meta", text: meta.join(" · ") }));
      if (f.caused_by) {
        card.append(el("p", { class: "kb-doctor__meta", text: `likely caused by: ${f.caused_by.map((c) => titles[c] || c).join("; ")}` }));
      }
      // the theme makes <code> the scrolling box: it takes focus so keyboards can scroll it
      const pre = el("pre", { class: "kb-doctor__evidence" });
      const code = el("code", { tabindex: "0", "aria-label": `Evidence lines for ${window.kbDom.plainTitle(f.title)}` });
      for (const e of f.evidence) {
        code.append(el("span", { class: "kb-doctor__lineno", text: sources.length > 1 ? at(e.source, e.line) : `${e.line}` }), ` ${shown(e.text)}\n`);
      }
      pre.append(code);
      card.append(pre);
      if (f.role === "root" && f.fix && f.fix.length && !compact) {
        const list = el("ol", { class: "kb-doctor__steps" });
        for (const step of f.fix) {
          const item = el("li", {}, window.kbDom.prose(step.text));  // code spans as code (kb-dom.js)
          if (step.command) item.append(commandBlock(step.command));
          list.append(item);
        }
        card.append(el("p", { text: "First steps:" }), list);
      }
      box.append(card);
    }
    return box;
  }

  // ---- the widget -------------------------------------------------------------------------
  let counter = 0;

  class Doctor {
    constructor(root) {
      this.root = root;
      this.compact = root.dataset.mode === "compact";
      this.cancelled = false;
      this.busy = false;
      this.markdown = "";
      const id = `kb-doctor-${++counter}`;
      // autocomplete off: the browser does not refill the box with the log on Back (form restore)
      this.placeholder = "Paste dmesg, a Python traceback, NCCL, torchrun or Slurm output…";
      this.textarea = el("textarea", {
        id, class: "kb-doctor__input", rows: this.compact ? 5 : 12, spellcheck: "false", autocomplete: "off",
        placeholder: this.placeholder, "aria-describedby": `${id}-notice`,
      });
      // what the page read other than the box (a large paste), or why a request waits: always
      // visible, beside the box (the status line below is the run's progress)
      this.notice = el("p", { id: `${id}-notice`, class: "kb-doctor__notice", "aria-live": "polite", hidden: true });
      this.go = el("button", { type: "button", class: "md-button md-button--primary", text: "Diagnose" });
      this.cancel = el("button", { type: "button", class: "md-button", text: "Cancel", hidden: true });
      this.status = el("p", { class: "kb-doctor__status", role: "status", "aria-live": "polite" });
      this.result = el("div", { class: "kb-doctor__result" });
      this.copy = el("button", { type: "button", class: "md-button", text: "Copy as Markdown", hidden: true });
      this.copyRedacted = el("button", { type: "button", class: "md-button", text: "Copy redacted", hidden: true,
        title: "Host names, addresses, user names, e-mails and secrets replaced by placeholders, for a public issue" });
      const label = el("label", { for: id, class: "kb-doctor__label",
        text: root.dataset.label || (this.compact ? "Seeing this failure? Paste your log to check it here" : "Paste a log") });
      const actions = el("div", { class: "kb-doctor__actions" }, this.go, this.cancel, this.copy, this.copyRedacted);
      root.append(label, this.textarea, this.notice, actions);
      if (!this.compact) {
        this.file = el("input", { type: "file", id: `${id}-file`, class: "kb-doctor__file", multiple: true });
        const fileLabel = el("label", { for: `${id}-file`, class: "kb-doctor__file-label",
          text: "Or choose log files (any size; .gz, .zip and .tar read through; all of a job's logs at once):" });
        this.folder = el("input", { type: "file", id: `${id}-folder`, class: "kb-doctor__file", webkitdirectory: true });
        const folderLabel = el("label", { for: `${id}-folder`, class: "kb-doctor__file-label", text: "or a folder:" });
        root.append(el("div", { class: "kb-doctor__filebox" }, fileLabel, this.file, " ", folderLabel, this.folder));
        const chosen = (input) => () => {
          const files = Array.from(input.files || []);
          if (!files.length) return;
          if (this.busy) {
            input.value = "";  // it was not read: the chooser does not keep showing its name
            this.refuse(`${files.length > 1 ? `The ${files.length} files you chose were` : `${files[0].name} was`} not read`,
              files.length > 1 ? "choose them again" : "choose it again");
            return;
          }
          this.start(files.map(fileSource), input);
        };
        this.file.addEventListener("change", chosen(this.file));
        this.folder.addEventListener("change", chosen(this.folder));
        this.samples = el("p", { class: "kb-doctor__samples" });
        root.append(this.samples);
        this.loadSamples();
      }
      root.append(el("p", { class: "kb-doctor__privacy",
        text: "Runs in this browser with Python compiled to WebAssembly; your log is not uploaded." }), this.status, this.result);
      this.setState("idle", "");

      const warm = () => { bootWorker().catch(() => {}); };
      if (!this.compact) preload(warm);
      this.textarea.addEventListener("focus", warm, { once: true });
      this.textarea.addEventListener("paste", warm, { once: true });
      this.textarea.addEventListener("input", warm, { once: true });
      this.go.addEventListener("click", () => this.diagnoseText());
      // While a diagnosis runs, nothing may change what it reads or what the box shows: the box
      // is read-only, and each attempt (typing, a paste, a sample, a drop, a chosen file) is
      // refused with a visible reason, never dropped silently (Cancel, then try again).
      this.textarea.addEventListener("keydown", (event) => {
        const ctrl = event.ctrlKey || event.metaKey;
        if (event.key === "Enter" && ctrl) {
          if (this.busy) this.refuse("Not started", "press Ctrl+Enter again");
          else this.diagnoseText();
          return;
        }
        if (!this.busy) return;
        const edits = (!ctrl && !event.altKey && event.key.length === 1) || ["Backspace", "Delete", "Enter"].includes(event.key)
          || (ctrl && ["x", "z", "y"].includes(event.key.toLowerCase()));  // a paste: its own handler
        if (edits) {
          event.preventDefault();
          this.refuse("The box cannot be edited now", "edit it");
        }
      });
      this.textarea.addEventListener("input", () => {
        // the box holds a log again: the notice of an earlier large paste (or refusal) no longer applies
        if (this.textarea.value && this.notice.dataset.kind && !this.busy) this.setNotice("", "");
      });
      this.cancel.addEventListener("click", () => this.stop());
      // a large paste is read as a chosen file is, at once, and never put in the text box
      this.textarea.addEventListener("paste", (event) => {
        const data = event.clipboardData;
        if (this.busy) {
          event.preventDefault();  // never into the box, small or large, while a run reads another log
          this.refuse("Your paste was not read", "paste again");
          return;
        }
        if (!data) return;
        const text = data.getData("text/plain") || data.getData("text");
        if (text.length <= PASTE_AS_FILE_CHARS) return;
        event.preventDefault();
        this.pasteLarge(text);
      });
      this.copy.addEventListener("click", () => this.copyMarkdown(this.markdown, "Copied the report as Markdown."));
      this.copyRedacted.addEventListener("click", () => this.copyMarkdown(this.redacted,
        "Copied the report with host names, addresses, user names and secrets replaced. Check it before you paste."));
      root.addEventListener("dragover", (event) => { event.preventDefault(); root.classList.add("kb-doctor--drop"); });
      root.addEventListener("dragleave", () => root.classList.remove("kb-doctor--drop"));
      root.addEventListener("drop", (event) => {
        root.classList.remove("kb-doctor--drop");
        const transfer = event.dataTransfer;
        const files = Array.from((transfer && transfer.files) || []);
        const text = transfer && !files.length ? transfer.getData("text/plain") : "";
        // text dropped into the box goes where it is dropped, as typed text would (unless large)
        if (text && event.target === this.textarea && !this.busy && text.length <= PASTE_AS_FILE_CHARS) return;
        event.preventDefault();
        if (this.busy) {
          if (text) this.refuse("The dropped text was not read", "drop it again");
          else if (files.length === 1) this.refuse(`${files[0].name} was not read`, "drop it again");
          else this.refuse("The dropped files were not read", "drop them again");
          return;
        }
        if (text) {  // text dropped beside the box, or a large text: as if it were pasted
          if (text.length > PASTE_AS_FILE_CHARS) this.pasteLarge(text);
          else { this.textarea.value = text; this.setNotice("", ""); this.textarea.focus(); }
          return;
        }
        droppedFiles(transfer).then((files) => {
          if (!files.length) return;
          if (this.busy) this.refuse(files.length > 1 ? `The ${files.length} dropped files were not read` : `${files[0].name} was not read`,
            files.length > 1 ? "drop them again" : "drop it again");
          else {
            const passed = files.passed ? [`only ${files.length.toLocaleString()} of the ` +
              `${(files.length + files.passed).toLocaleString()}${files.passed >= MAX_DROPPED * 10 ? " or more" : ""} dropped ` +
              `files were read (at most ${MAX_DROPPED.toLocaleString()} at once, in the order the browser listed them): ` +
              "drop the folders holding the rest separately, or run kb diagnose on the folder"] : [];
            this.start(files.map(fileSource), undefined, undefined, passed);
          }
        }, (err) => { if (!this.busy) this.showError(new Error(`the dropped files could not be listed (${err && err.message ? err.message : err})`), null); });
      });
    }

    setState(state, message) {
      this.root.dataset.state = state;
      this.status.textContent = message;
    }

    // the line under the box: `kind` "paste" (what a large paste became) or "busy" (a refusal)
    setNotice(kind, text) {
      this.notice.dataset.kind = kind;
      this.notice.textContent = text;
      this.notice.hidden = !text;
      if (!kind) this.textarea.placeholder = this.placeholder;  // a refusal leaves a large paste's word in the empty box
    }

    // a request made while a diagnosis runs: said, not dropped. `what`: what was not done
    // ("Your paste was not read"), `again`: what to do once the run is over
    refuse(what, again) {
      this.setNotice("busy", `${what}: a diagnosis of ${this.running} is still running. ` +
        `Wait for it to end, or Cancel it, then ${again}.`);
    }

    // A paste over PASTE_AS_FILE_CHARS is read as a chosen file is, never put in the box (a
    // text box holding megabytes freezes the tab). The box is emptied, so that what it shows is
    // never taken for what was read, and the notice says where the paste went.
    pasteLarge(text) {
      this.textarea.value = "";
      this.start(textSource(text, "pasted log"), null, "the pasted log");
      const size = `${text.length.toLocaleString()} characters`;
      this.setNotice("paste", `Pasted log of ${size}: read directly, not put in the box ` +
        "(too large to show). Paste again or choose a file to diagnose another log.");
      this.textarea.placeholder = `Pasted log of ${size}: read directly, not shown here. ` +
        "Paste again or choose a file to diagnose another log.";
    }

    async loadSamples() {
      try {
        const samples = await (await fetch(SAMPLES_URL)).json();
        if (!samples.length) return;
        this.samples.append("Try a real log: ");
        samples.forEach((sample, i) => {
          const button = el("button", { type: "button", class: "kb-doctor__sample", text: sample.title });
          const refuse = () => this.refuse(`The sample “${sample.title}” was not loaded`, "choose it again");
          button.addEventListener("click", async () => {
            if (this.busy) { refuse(); return; }
            const text = await (await fetch(new URL(sample.path, SAMPLES_URL))).text();
            if (this.busy) { refuse(); return; }  // another run began while the sample downloaded
            this.textarea.value = text;
            this.setNotice("", "");
            this.diagnoseText(sample.name);
          });
          this.samples.append(button, " ", el("a", { href: sample.source, class: "kb-doctor__source", text: "(source)" }),
            i < samples.length - 1 ? " · " : "");
        });
      } catch (err) {
        this.samples.remove();
      }
    }

    diagnoseText(name) {
      if (this.busy) { this.refuse("Not started", "press Diagnose again"); return; }
      const text = this.textarea.value;
      if (!text.trim()) {
        this.setState("idle", "Paste a log first, or choose a file.");
        this.textarea.focus();
        return;
      }
      this.start(textSource(text, name || "pasted log"), null, null);
    }

    // while a run is on: the box read-only, the samples marked unavailable (a click on one is
    // refused with the reason), the root marked for the style sheet
    lock(on) {
      this.busy = on;
      this.textarea.readOnly = on;
      if (on) this.root.dataset.busy = "true";
      else delete this.root.dataset.busy;
      if (this.samples) {
        for (const button of this.samples.querySelectorAll("button")) {
          if (on) button.setAttribute("aria-disabled", "true");
          else button.removeAttribute("aria-disabled");
        }
      }
    }

    // `sources`: one input or several (dropped files, a folder); each is sent as its own input
    // of one diagnosis, so the report names the file, host and rank where the failure started.
    // Cancel: stop between pieces; a worker still busy after CANCEL_GRACE_MS is stopped. While
    // Python starts, Cancel stops the waiting (start-up goes on, for the next use).
    stop() {
      if (!this.busy || this.cancelled) return;
      this.cancelled = true;
      if (this.wake) this.wake();
      clearTimeout(this.killTimer);
      this.killTimer = setTimeout(() => {
        if (this.busy && this.channel) this.channel.kill(new Error("Cancelled."));
      }, CANCEL_GRACE_MS);
    }

    // `chooser`: the file input the files came from (the other one is cleared, so that no
    // chooser shows the name of a file this report is not about); `label`: what the report's
    // heading says was read ("the pasted log"; a single file's name by default; nothing for the
    // text in the box, which the reader sees)
    async start(sources, chooser, label, notes) {
      if (!Array.isArray(sources)) sources = [sources];
      if (!sources.length) return;
      if (this.busy) { this.refuse("Not started", "try again"); return; }
      const all = sources;
      const source = sources.length === 1 ? sources[0]
        : { name: `${sources.length} files`, size: sources.reduce((n, s) => n + s.size, 0) };
      if (label === undefined) label = sources.length === 1 && source.file ? source.name : null;
      this.running = sources.length > 1 ? source.name : label || (source.file ? source.name : "the text in the box");
      for (const input of [this.file, this.folder]) if (input && input !== chooser) input.value = "";
      this.setNotice("", "");
      const pageNotes = [...(notes || [])];
      const named = (input) => (input.file ? input.name : this.running);
      this.lock(true);
      this.cancelled = false;
      this.channel = null;
      this.go.disabled = true;
      this.copy.hidden = true;
      this.copyRedacted.hidden = true;
      this.cancel.hidden = false;
      this.result.replaceChildren();
      let release = null;
      try {
        const show = (p) => this.setState("loading", `Preparing the doctor, step ${p.step} of ${p.steps}: ${p.text}…`);
        this.setState("loading", "Preparing the doctor (first use on this page only)…");
        if (lastProgress) show(lastProgress);
        progressListeners.add(show);
        const woken = new Promise((resolve) => { this.wake = resolve; });
        let channel;
        for (;;) {
          try { channel = await Promise.race([bootWorker(), woken]); } finally { progressListeners.delete(show); }
          if (this.cancelled) {
            this.wake = null;
            this.setState("cancelled", "Cancelled.");
            return;
          }
          // Python is up; another box on this page may be using it
          if (channel.users) this.setState("loading", "Waiting for the other log box on this page to finish its diagnosis…");
          release = await channel.acquire();  // another box on this page may be using the worker
          if (!channel.dead) break;
          release();  // the worker was stopped while this box waited its turn: start a new one
          release = null;
        }
        this.wake = null;
        this.channel = channel;
        this.setState("analysing", `Analysing ${source.name} (${formatBytes(source.size)})…`);
        await channel.send({ type: "start" });
        let done = 0;
        for (const [i, input] of sources.entries()) {
          await channel.send({ type: "begin", name: input.name });
          if (!input.size && sources.length > 1) pageNotes.push(`${named(input)} is empty (0 bytes)`);
          let pos = 0;
          while (pos < input.size) {
            if (this.cancelled) {
              await channel.send({ type: "cancel" });
              this.setState("cancelled", "Cancelled.");
              return;
            }
            let piece;
            try {
              piece = await input.read(pos, CHUNK);
            } catch (err) {
              if (!input.file) throw err;
              const why = unreadable(input.name, err);
              // one input: its report would be a part of it, silently; several: the others are read
              if (sources.length === 1) throw new Error(`${why}. Choose it again.`);
              await channel.send({ type: "skip", note: `${why}; skipped${pos ? " (what came before was read)" : ""}` });
              break;
            }
            pos += piece.consumed;
            await channel.send({ type: "chunk", data: piece.buffer }, [piece.buffer]);
            const pct = source.size ? Math.floor((100 * (done + pos)) / source.size) : 100;
            const which = sources.length > 1 ? ` (file ${i + 1} of ${sources.length}: ${input.name})` : "";
            this.setState("analysing", `Analysing ${source.name}: ${pct}% of ${formatBytes(source.size)}${which}…`);
          }
          done += input.size;
        }
        if (this.cancelled) {
          await channel.send({ type: "cancel" });
          this.setState("cancelled", "Cancelled.");
          return;
        }
        const reply = await channel.send({ type: "finish", name: source.name });
        this.markdown = reply.markdown;
        this.redacted = reply.redacted;
        // the report's JSON (kb.diagnosis/2) rides along, inert, for tools and tests
        const data = el("script", { type: "application/json", class: "kb-doctor__json" });
        data.textContent = JSON.stringify(reply.report);
        const empty = sources.every((input) => !input.size)
          ? (sources.length > 1 ? `all ${sources.length} files are empty (0 bytes)` : `${named(source)} is empty (0 bytes)`) : null;
        this.result.replaceChildren(renderReport(reply.report, this.compact, { label, empty, notes: pageNotes }), data);
        this.copy.hidden = false;
        this.copyRedacted.hidden = false;
        this.setState("done", empty ? "Done: nothing to read."
          : reply.report.verdict === "no known failure found" ? "Done: no known failure found." : `Done: ${reply.report.verdict}.`);
        // the report may sit below the fold: bring it into view from the status line above it (its
        // scroll margin keeps it clear of the sticky header) and give the heading focus, so a
        // keyboard or screen-reader user lands on the answer (the status line announces it too)
        const heading = this.result.querySelector(".kb-doctor__verdict");
        if (heading) {
          heading.focus({ preventScroll: true });
          this.status.scrollIntoView({ block: "start", behavior: "auto" });
        }
      } catch (err) {
        if (this.cancelled) this.setState("cancelled", "Cancelled.");
        else this.showError(err, all, chooser, label, notes);
      } finally {
        if (release) release();
        clearTimeout(this.killTimer);
        this.channel = null;
        this.lock(false);
        this.go.disabled = false;
        this.cancel.hidden = true;
        // a request refused during the run: now it can be made
        if (this.notice.dataset.kind === "busy") {
          this.setNotice("busy", this.notice.textContent.replace(/ is still running\. Wait for it to end, or Cancel it, then (.*)\.$/,
            " was running. It has ended: $1 now."));
        }
      }
    }

    // `sources`: what to read again on Retry (all the inputs of the run that failed), or null
    showError(err, sources, chooser, label, notes) {
      this.setState("error", err.message);
      const parts = [el("p", { class: "kb-doctor__error", text: "The log doctor could not run. " })];
      if (sources) {
        const retry = el("button", { type: "button", class: "md-button", text: "Retry" });
        retry.addEventListener("click", () => this.start(sources, chooser, label, notes));
        parts.push(retry);
      }
      this.result.replaceChildren(...parts);
      if (parts[1]) parts[1].focus();
    }

    async copyMarkdown(text, done) {
      try {
        await navigator.clipboard.writeText(text);
        this.status.textContent = done;
      } catch (err) {
        const area = el("textarea", { class: "kb-doctor__copybuffer", readonly: true });
        area.value = text;
        this.root.append(area);
        area.select();
        const ok = document.execCommand && document.execCommand("copy");
        area.remove();
        this.status.textContent = ok ? done : "Copy failed: select the report and copy it by hand.";
      }
    }
  }

  function mount() {
    document.querySelectorAll(".kb-doctor:not([data-mounted])").forEach((root) => {
      root.dataset.mounted = "true";
      root.replaceChildren();
      new Doctor(root);
    });
  }

  if (typeof document$ !== "undefined") document$.subscribe(mount); // Material's instant navigation
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
