// Byte-compile the log doctor's Python with Pyodide's own interpreter (run by generator/site/bytecode.py).
//
// A .pyc holds bytecode of one CPython version: the browser runs Pyodide's, so only Pyodide can
// write it (the build's own Python may be another version). This boots the site's pinned Pyodide
// under Node, imports the matcher from its sources, and writes unchecked-hash .pyc files for
// the matcher and for every standard-library module Python imported from its zip on the way
// (Pyodide's start-up, the matcher's imports), so that the browser compiles none of them.
//
// usage: node bytecode.mjs REQUEST.json
// REQUEST: {"pyodide": dir, "boot_stdlib": zip to start from (any with the same sources),
//           "stdlib": Pyodide's own python_stdlib.zip, "matcher": {"kbmatch/x.py": path},
//           "matcher_zip": where the worker puts the matcher's zip in Pyodide's file system, "out": dir}
// writes under out: stdlib/<path>.pyc, matcher/<path>.pyc and info.json (the modules compiled)
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const request = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const { loadPyodide } = await import(pathToFileURL(path.join(request.pyodide, "pyodide.mjs")).href);
const py = await loadPyodide({
  indexURL: request.pyodide + path.sep,
  stdLibURL: request.boot_stdlib,
  stdout: () => {},
  stderr: (line) => process.stderr.write(`${line}\n`),
});
py.FS.mkdirTree("/tmp/kbzip/kbmatch");
for (const [name, file] of Object.entries(request.matcher)) py.FS.writeFile(`/tmp/kbzip/${name}`, fs.readFileSync(file));
py.FS.writeFile("/tmp/stdlib-sources.zip", fs.readFileSync(request.stdlib));
py.globals.set("matcher_names", py.toPy(Object.keys(request.matcher)));
py.globals.set("matcher_zip", request.matcher_zip);
const result = py.runPython(`
import importlib, importlib.util, json, os, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

STDLIB = next(p for p in sys.path if p.endswith(".zip"))  # /lib/python3NN.zip

def zip_modules():
    """Path in the zip of every module imported from it (frozen and built-in ones need nothing)."""
    out = set()
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or ""
        if type(getattr(spec, "loader", None)).__name__ == "zipimporter" and origin.startswith(STDLIB + "/"):
            out.add(origin[len(STDLIB) + 1:].removesuffix("c"))  # a .pyc the boot zip had: its .py
    return out

def pyc(source, filename):
    code = compile(source, filename, "exec", dont_inherit=True)
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False))

def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)

# the matcher reaches Python as in the worker: its zip on sys.path, imported by zipimport
with zipfile.ZipFile(matcher_zip, "w") as zf:
    for name in matcher_names:
        zf.write(f"/tmp/kbzip/{name}", name)
sys.path.insert(0, matcher_zip)
for name in matcher_names:
    importlib.import_module(name.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
needed = sorted(zip_modules())
sources = zipfile.ZipFile("/tmp/stdlib-sources.zip")
for name in needed:
    write(f"/tmp/out/stdlib/{name}c", pyc(sources.read(name), f"{STDLIB}/{name}"))
for name in matcher_names:
    with open(f"/tmp/kbzip/{name}", "rb") as fh:
        write(f"/tmp/out/matcher/{name}c", pyc(fh.read(), f"{matcher_zip}/{name}"))
json.dumps({"version": sys.version, "stdlib": needed})
`);
const walk = (dir) => py.FS.readdir(dir).filter((n) => n !== "." && n !== "..").flatMap((n) => {
  const full = `${dir}/${n}`;
  return py.FS.isDir(py.FS.stat(full).mode) ? walk(full) : [full];
});
for (const file of walk("/tmp/out")) {
  const target = path.join(request.out, file.slice("/tmp/out/".length));
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, py.FS.readFile(file));
}
fs.writeFileSync(path.join(request.out, "info.json"), result);
