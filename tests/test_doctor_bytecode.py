"""The log doctor's bytecode (generator/site/bytecode.py): written by Pyodide's own Python at
build time, so the browser compiles none of the modules it imports.

The built site's standard library zip and matcher zip are loaded in Pyodide under Node, as
the worker loads them: no module file is compiled from source on the way to a report, and the
report is the one CPython gives. Without Node, or when it fails, the build ships sources.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from generator.matcher import Diagnoser, load_rules, to_json
from generator.site import bytecode
from generator.site.assets import matcher_sources, matcher_zip

PYODIDE = ROOT / "node_modules" / "pyodide"
LOG = ROOT / "tests" / "fixtures" / "logs" / "cases" / "107.log"

# Loads the runtime as the worker does (its standard library from the manifest, the matcher's
# zip on sys.path), counts every compile() of a module file, then diagnoses.
LOAD = """
import fs from "node:fs";
import { pathToFileURL } from "node:url";
const [pyodideDir, stdlib, matcher, rules, log] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(pyodideDir + "/pyodide.mjs").href);
const py = await loadPyodide({ indexURL: pyodideDir + "/", stdLibURL: stdlib });
py.FS.writeFile("/home/pyodide/kbmatch.zip", new Uint8Array(fs.readFileSync(matcher)));
py.globals.set("rules_text", fs.readFileSync(rules, "utf8"));
py.globals.set("log", new Uint8Array(fs.readFileSync(log)));
console.log(py.runPython(`
import builtins, json, sys
from_source = []
_compile = builtins.compile
def counting(source, filename, *args, **kwargs):
    if str(filename).endswith(".py"):
        from_source.append(str(filename))
    return _compile(source, filename, *args, **kwargs)
builtins.compile = counting
sys.path.insert(0, "/home/pyodide/kbmatch.zip")
from kbmatch import Diagnoser, check_rules, to_json, to_markdown
from kbmatch.redact import Redactor
rules = check_rules(json.loads(rules_text), "the site's rules", analyse=False)
report = Diagnoser(rules, lazy=True).diagnose_text(log.to_bytes().decode())
to_markdown(Redactor().redact_report(report), "x")
zipped = sorted(name for name, m in sys.modules.items()
                if type(getattr(getattr(m, "__spec__", None), "loader", None)).__name__ == "zipimporter")
json.dumps({"from_source": from_source, "report": json.loads(to_json(report)),
            "zipped_sources": [n for n in zipped if not sys.modules[n].__spec__.origin.endswith(".pyc")],
            "zipped": len(zipped), "matcher": sorted(n for n in zipped if n.startswith("kbmatch"))})
`));
"""


def _node() -> str:
    node = shutil.which("node")
    if node is None or not (PYODIDE / "pyodide.mjs").is_file():
        if os.environ.get("CI"):
            pytest.fail("CI is set but node or node_modules/pyodide is missing (make setup runs npm ci)")
        pytest.skip("needs node and node_modules/pyodide (npm ci)")
    return node


@pytest.mark.slow
def test_the_built_doctor_compiles_no_module_and_reports_as_cpython(built_site: Path, tmp_path: Path) -> None:
    node = _node()
    doctor = built_site / "assets" / "doctor"
    manifest = json.loads((doctor / "manifest.json").read_text(encoding="utf-8"))
    assert "stdlib" in manifest, "the build shipped no bytecode"
    with zipfile.ZipFile(doctor / manifest["matcher"]) as zf:
        names = set(zf.namelist())
    for name in matcher_sources():
        assert name in names and f"{name}c" in names  # the source stays, for tracebacks
    script = tmp_path / "load.mjs"
    script.write_text(LOAD, encoding="utf-8")
    proc = subprocess.run([node, str(script), str(PYODIDE), str(doctor / manifest["stdlib"]), str(doctor / manifest["matcher"]),
                           str(doctor / manifest["rules"]), str(LOG)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["from_source"] == []
    assert out["zipped"] > 100 and out["zipped_sources"] == []  # Pyodide's start-up's modules came as bytecode too
    assert len(out["matcher"]) == len(matcher_sources())
    cpython = json.loads(to_json(Diagnoser(load_rules(doctor / manifest["rules"])).diagnose(LOG.open("rb"))))
    assert out["report"] == cpython
    assert out["report"]["findings"], "the log's failure was found"


def test_without_node_the_build_ships_sources(tmp_path: Path, monkeypatch, capsys) -> None:
    if not (PYODIDE / "python_stdlib.zip").is_file():
        pytest.skip("needs node_modules/pyodide (npm ci)")
    monkeypatch.setattr(bytecode.shutil, "which", lambda name: None)
    assert bytecode.compile_doctor(PYODIDE, matcher_sources(), tmp_path / "cache") is None
    assert "Node.js is not on PATH" in capsys.readouterr().err
    with zipfile.ZipFile(__import__("io").BytesIO(matcher_zip(matcher_sources()))) as zf:
        assert sorted(zf.namelist()) == sorted(matcher_sources())


def test_a_failing_node_step_falls_back_to_sources(tmp_path: Path, monkeypatch, capsys) -> None:
    _node()
    broken = tmp_path / "broken.mjs"
    broken.write_text('console.error("no Pyodide here"); process.exit(3);\n', encoding="utf-8")
    monkeypatch.setattr(bytecode, "SCRIPT", broken)
    assert bytecode.compile_doctor(PYODIDE, matcher_sources(), tmp_path / "cache") is None
    err = capsys.readouterr().err
    assert "exit code 3" in err and "no Pyodide here" in err and "ships Python sources" in err
