// Log doctor worker: runs the atlas's own Python matcher in Pyodide, off the main thread.
// Everything it loads comes from this site (see manifest.json); the log never leaves the browser.
import { loadPyodide } from "../pyodide/pyodide.mjs";

const here = (path) => new URL(path, import.meta.url).href;
let py = null;

const GLUE = `
import json
from kbmatch import Diagnoser, check_rules, to_json, to_markdown

diagnoser = Diagnoser(check_rules(json.loads(rules_text)), site_url=site_url)
session = None

def start():
    global session
    session = diagnoser.session()

def feed(js_bytes):
    return session.feed(js_bytes.to_bytes())

def finish(name):
    global session
    report = session.finish()
    session = None
    return to_json(report), to_markdown(report, name)

def cancel():
    global session
    session = None
`;

async function boot(siteUrl) {
  const manifest = await (await fetch(here("manifest.json"))).json();
  const pyodide = await loadPyodide({ indexURL: here(manifest.pyodide) });
  const zip = await (await fetch(here(manifest.matcher))).arrayBuffer();
  pyodide.unpackArchive(zip, "zip", { extractDir: "/home/pyodide/lib" });
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/lib')");
  pyodide.globals.set("rules_text", await (await fetch(here(manifest.rules))).text());
  pyodide.globals.set("site_url", siteUrl);
  pyodide.runPython(GLUE);
  return pyodide;
}

function call(name, ...args) {
  return py.globals.get(name)(...args);
}

self.onmessage = async (event) => {
  const msg = event.data;
  try {
    switch (msg.type) {
      case "boot":
        py = await boot(msg.site);
        self.postMessage({ type: "ready" });
        break;
      case "start":
        call("start");
        self.postMessage({ type: "started" });
        break;
      case "chunk": {
        const seen = call("feed", new Uint8Array(msg.data));
        self.postMessage({ type: "ack", bytes: seen });
        break;
      }
      case "finish": {
        const result = call("finish", msg.name || "input");
        const [json, markdown] = result.toJs();
        result.destroy();
        self.postMessage({ type: "report", report: JSON.parse(json), markdown });
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
    self.postMessage({ type: "error", message: String(err && err.message ? err.message : err) });
  }
};
