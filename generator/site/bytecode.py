"""Bytecode for the log doctor: .pyc files written by Pyodide's own Python, cached between builds.

Pyodide's python_stdlib.zip holds sources only, and the doctor's matcher ships as sources:
without bytecode the browser compiles each module it imports, Pyodide's start-up's (about 150
of them) and the matcher's, in WebAssembly, at every cold start (about 2 s of a 4 s start). A
.pyc is specific to one CPython version, so only Pyodide's interpreter can write it: this runs
``bytecode.mjs`` under Node (present wherever the site is built: ``npm ci`` installs Pyodide).

The result, for the build to ship: Pyodide's standard library zip with the modules the doctor
imports as unchecked-hash .pyc in place of their sources (the others stay sources), and one
.pyc per matcher module. It is cached under ``node_modules/.cache/`` by the hash of everything
it is made from, so Node runs only when Pyodide, the matcher or this step changes. Without
Node, or when it fails, ``compile_doctor`` says why on stderr and returns None: the build then
ships sources, as before (the doctor starts more slowly, and works the same).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(__file__).with_name("bytecode.mjs")
# where the worker (docs/assets/doctor/worker.mjs) writes the matcher's zip and imports it from
MATCHER_ZIP = "/home/pyodide/kbmatch.zip"
CACHE_KEEP = 4  # results kept in the cache (a matcher being edited makes one per build)
NODE_TIMEOUT_S = 300


@dataclass
class Bytecode:
    """What the build ships: the standard library zip with bytecode, and the matcher's .pyc files."""

    stdlib_zip: bytes
    matcher: dict[str, bytes]  # 'kbmatch/engine.py' -> its .pyc, for kbmatch/engine.pyc in the zip


def compile_doctor(pyodide_dir: Path, matcher: dict[str, bytes], cache_root: Path) -> Bytecode | None:
    """Bytecode for ``matcher`` (zip path -> source) and the standard library of ``pyodide_dir``;
    None (with a message on stderr) when Node is missing or fails."""
    stdlib = pyodide_dir / "python_stdlib.zip"
    runtime, key = _keys(pyodide_dir, stdlib, matcher)
    cached = cache_root / runtime / key
    if not (cached / "info.json").is_file():
        node = shutil.which("node")
        if node is None:
            _say("Node.js is not on PATH")
            return None
        try:
            _run_node(node, pyodide_dir, stdlib, matcher, cached)
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            _say(str(exc))
            return None
    try:
        info = json.loads((cached / "info.json").read_text(encoding="utf-8"))
        os.utime(cached)  # most recently used: kept when the cache is pruned
        pycs = {name: (cached / "matcher" / f"{name}c").read_bytes() for name in matcher}
        stdlib_pycs = {name: (cached / "stdlib" / f"{name}c").read_bytes() for name in info["stdlib"]}
        return Bytecode(_stdlib_with(stdlib, stdlib_pycs, cached), pycs)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:  # a damaged cache: remove it to rebuild
        _say(f"{cached} is unreadable ({exc})")
        return None


def _say(why: str) -> None:
    print(f"log doctor: no bytecode ({why}); the site ships Python sources, and the doctor starts about "
          "2 s more slowly in the browser", file=sys.stderr)


def _keys(pyodide_dir: Path, stdlib: Path, matcher: dict[str, bytes]) -> tuple[str, str]:
    """The cache's folder for this Pyodide, and the key of this result within it."""
    package = pyodide_dir / "package.json"
    runtime = hashlib.sha256(package.read_bytes() if package.is_file() else b"")
    runtime.update(hashlib.sha256(stdlib.read_bytes()).digest())
    digest = hashlib.sha256(SCRIPT.read_bytes())
    for name in sorted(matcher):
        digest.update(name.encode() + b"\0" + hashlib.sha256(matcher[name]).digest())
    return runtime.hexdigest()[:16], digest.hexdigest()[:24]


def _run_node(node: str, pyodide_dir: Path, stdlib: Path, matcher: dict[str, bytes], target: Path) -> None:
    """Run bytecode.mjs into a fresh folder, then move it into the cache whole (builds may run at once)."""
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    for other in folder.parent.iterdir():  # results for another Pyodide are of no more use
        if other != folder and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)
    # Pyodide starts faster from a standard library that has bytecode already: an earlier result's
    boot = next((p / "stdlib.zip" for p in _entries(folder) if (p / "stdlib.zip").is_file()), stdlib)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".tmp-") as tmp:
        work = Path(tmp)
        sources = work / "sources"
        paths = {}
        for name, data in matcher.items():
            path = sources / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            paths[name] = str(path)
        out = work / "out"
        request = {"pyodide": str(pyodide_dir.resolve()), "boot_stdlib": str(boot.resolve()), "stdlib": str(stdlib.resolve()),
                   "matcher": paths, "matcher_zip": MATCHER_ZIP, "out": str(out)}
        (work / "request.json").write_text(json.dumps(request), encoding="utf-8")
        proc = subprocess.run([node, str(SCRIPT), str(work / "request.json")], capture_output=True, text=True,
                              timeout=NODE_TIMEOUT_S, check=False)
        if proc.returncode != 0 or not (out / "info.json").is_file():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ValueError(f"node {SCRIPT.name} failed with exit code {proc.returncode}: {tail[0][:200]}")
        try:
            out.rename(target)
        except OSError:  # another build finished the same result first
            if not (target / "info.json").is_file():
                raise
    for old in _entries(folder)[CACHE_KEEP:]:
        shutil.rmtree(old, ignore_errors=True)


def _entries(cache_root: Path) -> list[Path]:
    """Cached results, most recently used first."""
    found = [p for p in cache_root.iterdir() if p.is_dir() and not p.name.startswith(".") and (p / "info.json").is_file()]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def _stdlib_with(stdlib: Path, pycs: dict[str, bytes], cached: Path) -> bytes:
    """Pyodide's standard library zip with each of ``pycs``'s modules as its .pyc instead of its
    source (zipimport reads a .pyc first; an unchecked-hash .pyc needs no source beside it);
    written once into the cache entry."""
    done = cached / "stdlib.zip"
    if done.is_file():
        return done.read_bytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(stdlib) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename in pycs:
                entry = zipfile.ZipInfo(info.filename + "c", date_time=info.date_time)
                entry.compress_type = zipfile.ZIP_DEFLATED
                entry.external_attr = info.external_attr
                dst.writestr(entry, pycs[info.filename], compresslevel=9)
            else:
                dst.writestr(info, src.read(info))
    data = buf.getvalue()
    fd, tmp = tempfile.mkstemp(dir=cached, prefix=".stdlib-")  # builds running at once each write their own
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, done)
    return data
