// Log doctor worker: runs the atlas's own Python matcher in Pyodide, off the main thread.
// Everything it loads comes from this site (see manifest.json); the log never leaves the browser.
import { loadPyodide } from "../pyodide/pyodide.mjs";

const here = (path) => new URL(path, import.meta.url).href;
let py = null;

// ---- literal prefilter in JavaScript ---------------------------------------------------
// The matcher (Python) only needs to know which lines contain which anchor literals. An
// Aho-Corasick automaton finds all of them in one pass over the bytes, whatever their number,
// where Python would need one pass per anchor. Python then runs the real signatures on those
// lines, exactly as on the command line (the browser tests compare the two on every fixture).
const LOWER = new Uint8Array(256).map((_, b) => (b >= 65 && b <= 90 ? b + 32 : b));

// An Aho-Corasick automaton over byte classes: bytes that occur in no pattern share class 0, so
// a state's row has one column per distinct pattern byte (about 140 for the atlas's anchors)
// instead of 256. With `fold`, patterns are lower case and the input's A-Z map to a-z.
function automaton(patterns, fold) {
  const column = new Uint16Array(256);
  let width = 1;
  for (const bytes of patterns) for (const b of bytes) if (!column[b]) column[b] = width++;
  const classOf = fold ? column.map((_, b) => column[LOWER[b]]) : column;
  // the trie: per state, its children as a Map from class to state
  const next = [new Map()];
  const out = [[]];
  patterns.forEach((bytes, id) => {
    let state = 0;
    for (const b of bytes) {
      const c = column[b];
      let child = next[state].get(c);
      if (child === undefined) {
        child = next.length;
        next.push(new Map());
        out.push([]);
        next[state].set(c, child);
      }
      state = child;
    }
    out[state].push(id);
  });
  // the full transition table, breadth first: a state's row starts as a copy of its failure
  // state's row (complete already: it is shallower), then the state's own children overwrite it
  const n = next.length;
  const delta = new Int32Array(n * width);
  const fail = new Int32Array(n);
  const queue = new Int32Array(n);
  let head = 0, tail = 0;
  for (const [c, child] of next[0]) { delta[c] = child; queue[tail++] = child; }
  while (head < tail) {
    const state = queue[head++];
    const row = state * width;
    delta.copyWithin(row, fail[state] * width, fail[state] * width + width);
    for (const [c, child] of next[state]) {
      const f = delta[row + c];  // where the failure state goes on c: the child's failure state
      fail[child] = f;
      if (out[f].length) out[child] = out[child].concat(out[f]);
      delta[row + c] = child;
      queue[tail++] = child;
    }
  }
  const has = new Uint8Array(n);
  out.forEach((ids, state) => { has[state] = ids.length ? 1 : 0; });
  return { delta, out, has, width, classOf };
}

// The candidate lines of `data` and, for each, the signatures to try on it: those listed under
// an anchor the line holds whose own literal the line holds too (the matcher checks that again,
// as on the command line, but most lines that hold a common anchor such as 'WARN' go no
// further than this). A line with one of the parsers' own anchors (the Xid line) stays a
// candidate even when no signature is left, as the Hyperscan scanner does.
function makeScanner(rules) {
  const { anchors, signatures } = rules;
  const encoder = new TextEncoder();
  const exact = [], exactIds = [], folded = [], foldedIds = [];
  anchors.forEach((a, id) => {
    if (!a.text) return;
    if (a.ignore_case) { folded.push(encoder.encode(a.text.toLowerCase())); foldedIds.push(id); }
    else { exact.push(encoder.encode(a.text)); exactIds.push(id); }
  });
  const passes = [[automaton(exact, false), exactIds]];
  if (folded.length) passes.push([automaton(folded, true), foldedIds]);
  const literals = signatures.map((sig) => sig.literals.map((lit) => (sig.ignore_case ? lit.toLowerCase() : lit)));
  const decoder = new TextDecoder("utf-8");
  // returns a flat Int32Array: start, end, count, signature ids... for each candidate line
  return (data) => {
    const lines = new Map();
    for (const [{ delta, out, has, width, classOf }, ids] of passes) {
      let state = 0, lineStart = 0;
      for (let i = 0; i < data.length; i++) {
        const b = data[i];
        if (b === 10) { state = 0; lineStart = i + 1; continue; }
        state = delta[state * width + classOf[b]];
        if (has[state]) {
          let found = lines.get(lineStart);
          if (!found) { found = new Set(); lines.set(lineStart, found); }
          for (const k of out[state]) found.add(ids[k]);
        }
      }
    }
    const starts = Array.from(lines.keys()).sort((x, y) => x - y);
    const flat = [];
    for (const start of starts) {
      let end = data.indexOf(10, start);
      if (end < 0) end = data.length;
      const text = decoder.decode(data.subarray(start, end));
      let lower = null;
      let builtin = false;
      const names = new Set();
      for (const a of lines.get(start)) {
        const anchor = anchors[a];
        if (anchor.builtin) builtin = true;
        for (const sig of anchor.signatures) {
          if (names.has(sig)) continue;
          let haystack = text;
          if (signatures[sig].ignore_case) haystack = lower === null ? (lower = text.toLowerCase()) : lower;
          if (literals[sig].some((lit) => haystack.includes(lit))) names.add(sig);
        }
      }
      if (names.size || builtin) flat.push(start, end, names.size, ...names);
    }
    return Int32Array.from(flat);
  };
}

const GLUE = `
import json
from pyodide.ffi import to_js
from kbmatch import Diagnoser, check_rules, to_json, to_markdown
from kbmatch.redact import Redactor


class JsScanner:
    """Candidate lines from the JavaScript Aho-Corasick prefilter, each with the signatures to try."""

    names_signatures = True  # as the Hyperscan scanner: signature indices, not anchors

    def __init__(self, scan):
        self.scan = scan

    def candidate_lines(self, data):
        flat = self.scan(to_js(data)).to_py().tolist()
        out, i = [], 0
        while i < len(flat):
            start, end, count = flat[i], flat[i + 1], flat[i + 2]
            out.append((start, end, frozenset(flat[i + 3:i + 3 + count])))
            i += 3 + count
        return out


# built and analysed with this site; its bytes checked against the hash in its name (rules_hashed)
rules = check_rules(json.loads(rules_bytes.to_bytes().decode("utf-8", errors="replace")), "the site's rules",
                    analyse=False, hashed=not rules_hashed)
del rules_bytes
diagnoser = Diagnoser(rules, scanner_factory=(lambda matcher: JsScanner(js_scan)) if js_scan else None, site_url=site_url,
                      lazy=True)
session = None

def start():
    global session
    session = diagnoser.session(None)  # inputs follow, each opened by begin()

def begin(name):
    session.begin(name)

def feed(js_bytes):
    return session.feed(js_bytes.to_bytes())

def finish(name):
    global session
    report = session.finish()
    session = None
    redactor = Redactor()
    shared = to_markdown(redactor.redact_report(report), redactor.redact_text(name))
    return to_json(report), to_markdown(report, name), shared

def skip(note):
    # an input the page could not read to its end (a file changed or removed after it was
    # chosen): what was read of it stays, the report says why the rest is missing
    session.job.notes.append(note)

def cancel():
    global session
    session = None
`;

// The rules file's name carries the SHA-256 of its bytes (rules.<first 12 hex digits>.json):
// checked here, by WebCrypto off this thread while Python downloads, an edited or truncated
// file is refused as Python's check of the document's own hash would refuse it, which Python
// then skips. False where WebCrypto is missing (a page served over plain HTTP from another
// host): Python checks the hash then.
async function hashChecked(path, bytes) {
  const named = /\.([0-9a-f]{12})\.json$/.exec(path);
  if (!named || !(self.crypto && crypto.subtle)) return false;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest.subarray(0, 6), (b) => b.toString(16).padStart(2, "0")).join("");
  if (hex !== named[1]) {
    throw new Error(`the site's rules: content does not match its hash (edited or truncated); rebuild the site`);
  }
  return true;
}

// Start-up in three steps, each announced to the page (progress) and timed (ready.timings):
// the runtime (the largest download, then WebAssembly compilation), the matcher package with
// the rules, then the rules checked and compiled in Python. The matcher and the rules are
// fetched, and the rules' prefilter automaton built, while the runtime downloads and compiles.
async function boot(siteUrl) {
  const t0 = performance.now();
  const timings = {};
  const progress = (step, text) => self.postMessage({ type: "progress", step, steps: 3, text });
  progress(1, "downloading and starting Python");
  // a file of the site that cannot be downloaded is named, not left to a JSON or zip error
  const get = async (path) => {
    let response;
    try { response = await fetch(here(path)); } catch (err) {
      throw new Error(`could not download ${path} (${err.message}); check the connection and retry`);
    }
    if (!response.ok) throw new Error(`could not download ${path} (HTTP ${response.status})`);
    return response;
  };
  const manifest = await (await get("manifest.json")).json();
  const extras = Promise.all([
    get(manifest.matcher).then((r) => r.arrayBuffer()),
    get(manifest.rules).then((r) => r.arrayBuffer()).then(async (bytes) => [bytes, await hashChecked(manifest.rules, bytes)]),
  ]).then(([zip, [rulesBytes, hashed]]) => {
    const t = performance.now();
    const rules = JSON.parse(new TextDecoder().decode(rulesBytes));
    const scan = makeScanner(rules);
    timings.prefilter = performance.now() - t;
    return { zip, rulesBytes, hashed, count: rules.signatures.length, scan };
  });
  extras.catch(() => {}); // a failed fetch is reported where it is awaited, below
  // Pyodide does not reject when its runtime (pyodide.asm.wasm) cannot be downloaded or
  // compiled: the failure is an unhandled rejection inside its loader, and loadPyodide never
  // settles, so the page would wait for its start-up timeout (60 s) and then blame WebAssembly.
  // Such a rejection during start-up ends the start-up at once, with its reason.
  let failed;
  const loaderFailed = new Promise((_, reject) => { failed = reject; });
  const onRejection = (event) => {
    const reason = event.reason;
    failed(new Error(`could not load the Python runtime (${reason && reason.message ? reason.message : reason})`));
  };
  self.addEventListener("unhandledrejection", onRejection);
  let pyodide;
  try {
    // the site's standard library has bytecode for the modules Python imports (built with
    // Pyodide's own Python, generator/site/bytecode.py), Pyodide's own only sources
    const options = { indexURL: here(manifest.pyodide) };
    if (manifest.stdlib) options.stdLibURL = here(manifest.stdlib);
    pyodide = await Promise.race([loadPyodide(options), loaderFailed]);
  } finally {
    self.removeEventListener("unhandledrejection", onRejection);
  }
  timings.runtime = performance.now() - t0;
  progress(2, "loading the matcher");
  const { zip, rulesBytes, hashed, count, scan } = await extras;
  // imported from the zip as it is (each module's bytecode beside its source: generator/site/bytecode.py)
  pyodide.FS.writeFile("/home/pyodide/kbmatch.zip", new Uint8Array(zip));
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/kbmatch.zip')");
  timings.matcher = performance.now() - t0 - timings.runtime;
  progress(3, `reading ${count} log signatures`);
  pyodide.globals.set("rules_bytes", new Uint8Array(rulesBytes));  // bytes cross faster than a string
  pyodide.globals.set("rules_hashed", hashed);
  pyodide.globals.set("site_url", siteUrl);
  pyodide.globals.set("js_scan", scan);
  pyodide.runPython(GLUE);
  timings.rules = performance.now() - t0 - timings.runtime - timings.matcher;
  return [pyodide, timings];
}

// One line a reader can act on, never a Python traceback: the last line of a Python error names
// its kind and message; running out of memory gets advice instead.
function clearMessage(err) {
  const text = String(err && err.message ? err.message : err);
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  const last = lines.length ? lines[lines.length - 1] : "unknown error";
  if (/MemoryError|out of memory|Out of bounds memory|Maximum call stack/i.test(text)) {
    return "This browser tab ran out of memory for this log. Run `kb diagnose FILE` on the command line: it reads logs of any size.";
  }
  return (err && err.type ? "The analysis stopped: " : "") + last.slice(0, 300);
}

function call(name, ...args) {
  return py.globals.get(name)(...args);
}

self.onmessage = async (event) => {
  const msg = event.data;
  try {
    switch (msg.type) {
      case "boot":
        {
          const [pyodide, timings] = await boot(msg.site);
          py = pyodide;
          self.postMessage({ type: "ready", timings });
        }
        break;
      case "start":
        call("start");
        self.postMessage({ type: "started" });
        break;
      case "begin":
        call("begin", String(msg.name || "input"));
        self.postMessage({ type: "begun" });
        break;
      case "chunk": {
        const seen = call("feed", new Uint8Array(msg.data));
        self.postMessage({ type: "ack", bytes: seen });
        break;
      }
      case "finish": {
        const result = call("finish", msg.name || "input");
        const [json, markdown, redacted] = result.toJs();
        result.destroy();
        self.postMessage({ type: "report", report: JSON.parse(json), markdown, redacted });
        break;
      }
      case "skip":
        call("skip", String(msg.note));
        self.postMessage({ type: "skipped" });
        break;
      case "cancel":
        call("cancel");
        self.postMessage({ type: "cancelled" });
        break;
      default:
        throw new Error(`unknown message ${msg.type}`);
    }
  } catch (err) {
    self.postMessage({ type: "error", message: clearMessage(err) });
  }
};
