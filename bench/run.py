"""`make bench`: build-speed benchmark of the generator and the whole MkDocs build.

For synthetic corpora of 1,000 and 5,000 entries (bench/synth.py) it runs the real site
build (`mkdocs build --strict`, the project's hook generating the pages) several times and
reports the median wall time, time per entry, the generator's own share (load, validate,
render, write, timed inside the hook) and the build's peak memory (max RSS of the build
process). Results are written to bench/results.md with the machine and the date.

Usage: python bench/run.py [--sizes 1000,5000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
RESULTS = ROOT / "bench" / "results.md"
sys.path.insert(0, str(ROOT / "bench"))

import measure  # noqa: E402
from results_file import section_head, write_section  # noqa: E402
from synth import write_corpus  # noqa: E402


def bench_config(docs: Path, site: Path) -> Path:
    """mkdocs.yml with absolute paths, building from a private docs folder into ``site``."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    text = text.replace("docs_dir: docs", f"docs_dir: {docs}").replace("site_dir: site", f"site_dir: {site}")
    text = text.replace("custom_dir: overrides", f"custom_dir: {ROOT / 'overrides'}")
    text = text.replace("  - generator/site/mkdocs_hook.py", f"  - {ROOT / 'generator' / 'site' / 'mkdocs_hook.py'}")
    text = re.sub(r"\nwatch:\n(  - .*\n)+", "\n", text)
    path = docs.parent / "mkdocs.yml"
    path.write_text(text, encoding="utf-8")
    return path


def run_build(corpus: Path, work: Path) -> dict:
    """One full site build; returns wall seconds, generator seconds and peak RSS in MiB."""
    docs = work / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("entries", "categories", "xid", "index.md", "data"))
    site = work / "site"
    config = bench_config(docs, site)
    timing = work / "hook-timing.json"
    timing.unlink(missing_ok=True)
    env = {**os.environ, "KB_ENTRIES": str(corpus), "KB_HOOK_TIMING": str(timing), "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": str(ROOT)}
    wall, rss_mib, status, _, err = measure.timed([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f",
                                                   str(config)], ROOT, env)
    stderr = err.decode(errors="replace")
    if status != 0:
        raise SystemExit(f"mkdocs build failed for {corpus}:\n{stderr[-3000:]}")
    hook = json.loads(timing.read_text())
    pages = sum(1 for _ in site.rglob("index.html"))
    return {"wall": wall, "generator": hook["seconds"], "rss_mib": rss_mib, "pages": pages,
            "phases": hook["phases"], "forked": hook.get("forked", {})}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sizes:
        corpus = write_corpus(n, OUT / f"corpus-{n}")
        runs = []
        for r in range(args.runs):
            load = os.getloadavg()[0]
            result = run_build(corpus, OUT / f"work-{n}")
            result["load"] = load
            runs.append(result)
            print(f"{n} entries, run {r + 1}: {result['wall']:.2f} s wall, generator {result['generator']:.2f} s, "
                  f"peak {result['rss_mib']:.0f} MiB", flush=True)
        wall = statistics.median(r["wall"] for r in runs)
        gen = statistics.median(r["generator"] for r in runs)
        phases = {k: statistics.median(r["phases"][k] for r in runs) for k in runs[0]["phases"]}
        rows.append({"n": n, "runs": runs, "wall": wall, "gen": gen, "phases": phases,
                     "rss": max(r["rss_mib"] for r in runs), "pages": runs[0]["pages"]})
        shutil.rmtree(OUT / f"work-{n}", ignore_errors=True)
    write_results(rows, args.runs)
    print(f"wrote the build section of {RESULTS.relative_to(ROOT)}")
    return 0


CORE_PHASES = ("load", "validate", "render", "write")


def _core(row: dict) -> float:
    return sum(row["phases"][k] for k in CORE_PHASES)


def write_results(rows: list[dict], runs: int) -> None:
    lines = [
        *section_head("Site build time against corpus size (bench/run.py)"),
        "- Figures: medians of the runs listed.",
        "- Build: `mkdocs build --strict` of the real configuration (Material, search plugin, the project's hook"
        " generating every page), synthetic corpora from bench/synth.py (entries shaped like full-depth real ones).",
        "- Generator share: the project's own work in the build, timed inside it: load + validate + render"
        " (pages and open data) + write, before MkDocs renders the site. Shown beside it, the share once the"
        " post-build site assets are added too (the log doctor's files, the Pyodide copy, the CSP of every page).",
        "- Peak memory: maximum resident set size of the build process.",
        "- Two cores: the hook loads, checks and writes the entry pages partly in a forked child when a core is"
        " idle at that moment (generator/corpus/forked.py); the line under the table says in how many runs it did.",
        "",
        "| entries | pages built | runs (wall s) | median wall s | ms per entry | generator s (load / validate / render / write) | generator share | with site assets | peak RSS |",
        "|---:|---:|---|---:|---:|---|---:|---:|---:|",
    ]
    for row in rows:
        runs_text = ", ".join(f"{r['wall']:.1f}" for r in row["runs"])
        p = row["phases"]
        core = sum(p[k] for k in CORE_PHASES)
        phases = " / ".join(f"{p[k]:.2f}" for k in CORE_PHASES)
        lines.append(
            f"| {row['n']:,} | {row['pages']:,} | {runs_text} | {row['wall']:.1f} | {1000 * row['wall'] / row['n']:.1f} | "
            f"{core:.2f} ({phases}) | {100 * core / row['wall']:.1f} % | {100 * row['gen'] / row['wall']:.1f} % "
            f"| {row['rss']:.0f} MiB |"
        )
    loads = [r["load"] for row in rows for r in row["runs"] if "load" in r]
    if loads:  # other work on the machine slows MkDocs and the generator alike, but not in proportion
        lines += ["", f"Load average (1 min) before each run: {min(loads):.1f} to {max(loads):.1f} "
                  f"on {os.cpu_count()} CPUs (other work on the machine when above ~1)."]
    lines.append("")
    for row in rows:  # the hook forks a child for a phase only when a core is idle at that moment
        used = {k: sum(1 for r in row["runs"] if r.get("forked", {}).get(k)) for k in ("load", "validate", "render")}
        lines.append(f"- {row['n']:,} entries: second core used (a forked child) in load / validate / render "
                     f"{used['load']} / {used['validate']} / {used['render']} of {len(row['runs'])} runs.")
    if len(rows) >= 2:
        small, large = rows[0], rows[-1]
        ratio = large["wall"] / small["wall"]
        size_ratio = large["n"] / small["n"]
        lines += [
            "",
            f"Scaling: {large['n']:,} entries took {ratio:.2f} times as long as {small['n']:,} "
            f"({size_ratio:.0f} times the entries; target at most 6 times). "
            f"Generator share: {100 * _core(small) / small['wall']:.1f} % and {100 * _core(large) / large['wall']:.1f} % "
            f"(target at most 10 %); {100 * small['gen'] / small['wall']:.1f} % and {100 * large['gen'] / large['wall']:.1f} % "
            "with the post-build site assets.",
        ]
    write_section("build", "\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
