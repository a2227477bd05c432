"""Assemble the built site's non-page files: the log doctor's runtime and the open data.

After MkDocs has written the pages, this copies Pyodide's runtime from node_modules
(pinned in package.json, never committed, never fetched from a CDN), zips the matcher
package with its bytecode, writes Pyodide's standard library with bytecode for the modules
the doctor imports (``bytecode.py``; sources alone when Node cannot make it), the rules with
a content hash in their name, a manifest the worker reads, and the sample logs offered on
/diagnose/.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import yaml

from generator.corpus.validated import Corpus
from generator.errors import BuildError
from generator.exports.rules import compile_rules
from generator.site.bytecode import Bytecode, compile_doctor

PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
# pyodide.mjs falls back to a CDN only when run under Node; the site's copy cannot reach it at all
CDN_FALLBACK = b"https://cdn.jsdelivr.net/pyodide/"
MATCHER = Path(__file__).parents[1] / "matcher"
# real logs from the project's fixtures offered as samples on /diagnose/, in order of preference;
# the first four whose diagnosis names exactly the labelled failure are shown, titled by the report
SAMPLE_CASES = ("107", "014", "104", "115", "012", "118", "011", "001")
SAMPLES_SHOWN = 4


def copy_pyodide(repo_root: Path, site: Path) -> None:
    source = repo_root / "node_modules" / "pyodide"
    missing = [name for name in PYODIDE_FILES if not (source / name).is_file()]
    if missing:
        raise BuildError(f"{source}: Pyodide is not installed ({', '.join(missing)} missing); run 'npm ci' "
                         "(make build does it for you)")
    target = site / "assets" / "pyodide"
    target.mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_FILES:
        src, dst = source / name, target / name
        if name.endswith(".mjs"):
            data = src.read_bytes().replace(CDN_FALLBACK, b"data:text/plain,blocked/")
            if not dst.exists() or dst.read_bytes() != data:
                dst.write_bytes(data)
        elif not dst.exists() or dst.stat().st_size != src.stat().st_size or dst.stat().st_mtime < src.stat().st_mtime:
            shutil.copy2(src, dst)


def matcher_sources() -> dict[str, bytes]:
    """The matcher package's modules by their path in the doctor's zip (``kbmatch/engine.py``)."""
    return {f"kbmatch/{path.name}": path.read_bytes() for path in sorted(MATCHER.glob("*.py"))}


def matcher_zip(sources: dict[str, bytes], bytecode: Bytecode | None = None) -> bytes:
    """The matcher package (``matcher_sources``) as a zip holding ``kbmatch/`` (its imports are
    all relative), which the worker imports from as it is (zipimport), with each module's
    unchecked-hash .pyc beside its source when ``bytecode`` is given: zipimport reads the .pyc
    and compiles nothing; the source stays for tracebacks."""
    buf = io.BytesIO()
    files = dict(sources)
    if bytecode is not None:
        for name, pyc in bytecode.matcher.items():
            files[f"{name}c"] = pyc
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buf.getvalue()


def _short_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def write_doctor(corpus: Corpus, repo_root: Path, site: Path, rules_text: str | None = None) -> dict:
    """Write everything the log doctor loads; returns the manifest.

    ``rules_text`` is the rules.json already generated for /data/ in this build, if any.
    """
    copy_pyodide(repo_root, site)
    doctor = site / "assets" / "doctor"
    doctor.mkdir(parents=True, exist_ok=True)
    for old in list(doctor.glob("kbmatch.*.zip")) + list(doctor.glob("rules.*.json")) + list(doctor.glob("stdlib.*.zip")):
        old.unlink()
    pyodide = repo_root / "node_modules" / "pyodide"
    sources = matcher_sources()
    bytecode = compile_doctor(pyodide, sources, repo_root / "node_modules" / ".cache" / "kb-doctor-bytecode")
    zipped = matcher_zip(sources, bytecode)
    zip_name = f"kbmatch.{_short_hash(zipped)}.zip"
    (doctor / zip_name).write_bytes(zipped)
    manifest = {"pyodide": "../pyodide/", "matcher": zip_name}
    if bytecode is not None:  # Pyodide's standard library with bytecode, in place of its own (sources only)
        manifest["stdlib"] = f"stdlib.{_short_hash(bytecode.stdlib_zip)}.zip"
        (doctor / manifest["stdlib"]).write_bytes(bytecode.stdlib_zip)
    if rules_text is None:
        rules_text = json.dumps(compile_rules(corpus), ensure_ascii=False, separators=(",", ":")) + "\n"
    rules_bytes = rules_text.encode()
    rules_name = f"rules.{_short_hash(rules_bytes)}.json"
    (doctor / rules_name).write_bytes(rules_bytes)
    manifest["rules"] = rules_name
    (doctor / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    write_samples(corpus, repo_root, doctor, json.loads(rules_text))
    return manifest


def write_samples(corpus: Corpus, repo_root: Path, doctor: Path, rules: dict | None = None) -> list[dict]:
    """Copy the sample logs and write samples.json: each sample's button says what the doctor
    will answer for it (the root finding's title), and a sample whose diagnosis is not exactly
    its labelled failure is not offered."""
    from generator.matcher import Diagnoser  # noqa: PLC0415 - the build needs it only here

    fixtures = repo_root / "tests" / "fixtures" / "logs"
    labels_path = fixtures / "labels.yaml"
    samples_dir = doctor / "samples"
    samples_dir.mkdir(exist_ok=True)
    for old in samples_dir.glob("*.log"):
        old.unlink()
    out: list[dict] = []
    labels = {str(item["id"]): item for item in yaml.safe_load(labels_path.read_text(encoding="utf-8"))} if labels_path.exists() else {}
    diagnoser = Diagnoser(rules if rules is not None else compile_rules(corpus))
    for case in SAMPLE_CASES:
        label = labels.get(case)
        log = fixtures / "cases" / f"{case}.log"
        if len(out) == SAMPLES_SHOWN or not label or not log.exists() or label["expected"] not in corpus.by_id:
            continue
        with log.open("rb") as fh:
            report = diagnoser.diagnose(fh)
        root = next((f for f in report["findings"] if f["role"] == "root"), None)
        if root is None or root["id"] != label["expected"]:
            continue
        shutil.copy(log, samples_dir / f"{case}.log")
        title = root["title"].split(":")[0].split("(")[0].strip()
        out.append({"name": f"sample-{case}.log", "path": f"samples/{case}.log", "title": title,
                    "expected": root["id"], "source": label["source"]})
    (doctor / "samples.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out
