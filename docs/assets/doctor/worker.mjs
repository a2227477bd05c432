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
function automaton(patterns) {
  const next = [new Map()];
  const out = [[]];
  patterns.forEach((bytes, id) => {
    let state = 0;
    for (const b of bytes) {
      let child = next[state].get(b);
      if (child === undefined) {
        child = next.length;
        next.push(new Map());
        out.push([]);
        next[state].set(b, child);
      }
      state = child;
    }
    out[state].push(id);
  });
  const n = next.length;
  const delta = new Int32Array(n * 256);
  const fail = new Int32Array(n);
  const queue = new Int32Array(n);
  let head = 0, tail = 0;
  for (let b = 0; b < 256; b++) {
    const child = next[0].get(b);
    if (child !== undefined) { delta[b] = child; queue[tail++] = child; }
  }
  while (head < tail) {
    const state = queue[head++];
    for (let b = 0; b < 256; b++) {
      const child = next[state].get(b);
      if (child !== undefined) {
        fail[child] = delta[fail[state] * 256 + b];
        out[child] = out[child].concat(out[fail[child]]);
        delta[state * 256 + b] = child;
        queue[tail++] = child;
      } else {
        delta[state * 256 + b] = delta[fail[state] * 256 + b];
      }
    }
  }
  const has = new Uint8Array(n);
  out.forEach((ids, state) => { has[state] = ids.length ? 1 : 0; });
  return { delta, out, has };
}

const LOWER = new Uint8Array(256).map((_, b) => (b >= 65 && b <= 90 ? b + 32 : b));

function makeScanner(anchors) {
  const encoder = new TextEncoder();
  const exact = [], exactIds = [], folded = [], foldedIds = [];
  anchors.forEach((a, id) => {
    if (!a.text) return;
    if (a.ignore_case) { folded.push(encoder.encode(a.text.toLowerCase())); foldedIds.push(id); }
    else { exact.push(encoder.encode(a.text)); exactIds.push(id); }
  });
  const passes = [[automaton(exact), exactIds, null]];
  if (folded.length) passes.push([automaton(folded), foldedIds, LOWER]);
  // returns a flat Int32Array: start, end, count, anchor ids... for each candidate line
  return (data) => {
    const lines = new Map();
    for (const [{ delta, out, has }, ids, table] of passes) {
      let state = 0, lineStart = 0;
      for (let i = 0; i < data.length; i++) {
        let b = data[i];
        if (b === 10) { state = 0; lineStart = i + 1; continue; }
        if (table) b = table[b];
        state = delta[state * 256 + b];
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
      const found = lines.get(start);
      flat.push(start, end, found.size, ...found);
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
    """Candidate lines from the JavaScript Aho-Corasick prefilter (same anchors, same order)."""

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


rules = check_rules(json.loads(rules_text), "the site's rules", analyse=False)  # built and analysed with this site
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

def cancel():
    global session
    session = None
`;

// Start-up in three steps, each announced to the page (progress) and timed (ready.timings):
// the runtime (the largest download, then WebAssembly compilation), the matcher package with
// the rules (fetched while the runtime starts), then the rules checked and compiled in Python.
async function boot(siteUrl) {
  const t0 = performance.now();
  const timings = {};
  const progress = (step, text) => self.postMessage({ type: "progress", step, steps: 3, text });
  progress(1, "downloading and starting Python");
  const manifest = await (await fetch(here("manifest.json"))).json();
  const extras = Promise.all([
    fetch(here(manifest.matcher)).then((r) => r.arrayBuffer()),
    fetch(here(manifest.rules)).then((r) => r.text()),
  ]);
  const pyodide = await loadPyodide({ indexURL: here(manifest.pyodide) });
  timings.runtime = performance.now() - t0;
  progress(2, "loading the matcher");
  const [zip, rulesText] = await extras;
  pyodide.unpackArchive(zip, "zip", { extractDir: "/home/pyodide/lib" });
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/lib')");
  timings.matcher = performance.now() - t0 - timings.runtime;
  const rules = JSON.parse(rulesText);
  progress(3, `reading ${rules.signatures.length} log signatures`);
  pyodide.globals.set("rules_text", rulesText);
  pyodide.globals.set("site_url", siteUrl);
  pyodide.globals.set("js_scan", makeScanner(rules.anchors));
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
