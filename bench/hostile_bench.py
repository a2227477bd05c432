"""`make bench`, part four: memory and time under hostile logs (issue 11).

Measures `kb diagnose` (default engine) on logs built to make a matcher keep things:
- 200 MiB where every line matches (a flapping PCIe link: corrected AER lines, each with its
  own timestamp); target under 10 s and under 150 MB;
- 200 MiB where every line matches and no two lines are alike (Xid and OOM lines with
  changing pids, addresses and ranks), so nothing can be answered from memory;
- 200 MiB of one short line repeated ('Segmentation fault (core dumped)', a wrapper entry's: the
  closest wording is looked for beside it), three times as many lines as the AER log;
- 2 GiB mixed: bench/noise.py noise with one matching line in ten; memory must stay bounded;
- 200 MiB of error-looking lines made of the corpus's own distinctive words in random order, no
  two alike: few signatures match, so the closest-wording comparison (resemble.py) gets its
  most work; time and memory must stay those of a plain log.
Then the in-browser doctor on 1 GiB of matching lines: a report, or a clear message.
Medians of --runs; peak RSS is the process's max resident set size.

Usage: python bench/hostile_bench.py [--runs 3] [--no-browser]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

import measure  # noqa: E402
from results_file import section_head, write_section  # noqa: E402

MiB = 1 << 20


def _write_lines(path: Path, size: int, pair) -> None:  # noqa: ANN001 - pair(n) -> two log lines
    """Write ``pair(1), pair(2), ...`` until the file holds ``size`` bytes (kept if already there)."""
    if path.exists() and path.stat().st_size >= size:
        return
    with path.open("w", encoding="utf-8") as fh:
        n = written = 0
        while written < size:
            text = "".join(pair(n + i) for i in range(1, 10001))
            n += 10000
            fh.write(text)
            written += len(text)


def _aer_pair(n: int) -> str:
    """A flapping PCIe link: the same corrected-error lines, only the timestamp changes."""
    t = 1000.0 + n * 0.000113
    return (f"[{t:12.6f}] pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0\n"
            f"[{t:12.6f}] pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n")


def _distinct_pair(n: int) -> str:
    """An Xid and an OOM line that differ in pid, bus, rank and sizes: nothing repeats."""
    bus = (n * 7) % 256
    return (f"[{n / 1000:12.6f}] NVRM: Xid (PCI:0000:{bus:02x}:00): {(13, 31, 43, 79)[n % 4]}, pid={n}, "
            f"name=python{n % 97}, Ch 0000{n % 10:04d}\n"
            f"[rank{n % 512}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n % 9000} MiB "
            f"(GPU {n % 8}; {n % 80} GiB total capacity)\n")


def _lead_words() -> list[str]:
    """Lower-cased words of the corpus's example lines that few entries use (from build/rules.json),
    leaving out any word a signature's literal text holds or is held by, so that no signature
    matches the lines made of them and every line goes to the closest-wording comparison."""
    from generator.matcher.resemble import Resembler

    rules = json.loads((ROOT / "build" / "rules.json").read_text(encoding="utf-8"))
    index = Resembler(rules["resemble"])  # its word weights say which words few entries use
    literals = [lit.lower() for sig in rules["signatures"] for lit in sig["literals"]]
    pieces = {p for lit in literals for p in lit.split() if len(p) >= 4}
    return sorted(w for w, weight in index.weight.items() if weight >= index.distinctive
                  and not any(w in lit for lit in literals) and not any(p in w for p in pieces))


def write_unmatched(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size >= size:
        return
    import random

    words, rng = _lead_words(), random.Random(11)
    _write_lines(path, size, lambda n: f"fatal: {' '.join(rng.sample(words, 10))} #{n}\n"
                                       f"error {n}: {' '.join(rng.sample(words, 6))}\n")


def write_repeated(path: Path, size: int) -> None:
    _write_lines(path, size, _aer_pair)


def write_distinct(path: Path, size: int) -> None:
    _write_lines(path, size, _distinct_pair)


def write_wrapper(path: Path, size: int) -> None:
    _write_lines(path, size, lambda n: "Segmentation fault (core dumped)\nSegmentation fault (core dumped)\n")


def write_mixed(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size >= size:
        return
    from noise import write_log

    noise = OUT / "noise-200MiB.log"
    if not noise.exists():
        write_log(noise, 200 * MiB, planted=300)
    lines = noise.read_bytes().splitlines(keepends=True)
    with path.open("wb") as fh:
        written, n = 0, 0
        while written < size:
            chunk = []
            for line in lines[:200000]:
                n += 1
                chunk.append(line)
                if n % 10 == 0:
                    chunk.append(b"[%12.6f] NVRM: Xid (PCI:0000:3b:00): 79, pid=%d, GPU has fallen off the bus.\n" % (n / 1e3, n))
            data = b"".join(chunk)
            fh.write(data)
            written += len(data)
            lines = lines[200000:] + lines[:200000]


def timed(cmd: list[str]) -> tuple[float, float, bytes]:
    """Wall seconds, peak RSS in MiB (bench/measure.py) and stdout of one run of ``cmd``."""
    wall, rss, status, out, err = measure.timed(cmd, ROOT)
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err.decode()[-400:]}")
    return wall, rss, out


def browser_gib(site: Path, log: Path) -> tuple[str, float, str]:
    from browser import launch
    from playwright.sync_api import sync_playwright
    from site_server import SiteServer

    with SiteServer(site) as server, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(server.url + "/diagnose/")
        start = time.perf_counter()
        page.set_input_files(".kb-doctor input[type=file]", str(log))
        page.wait_for_selector(".kb-doctor[data-state=done], .kb-doctor[data-state=error]", timeout=1_800_000)
        seconds = time.perf_counter() - start
        state = page.get_attribute(".kb-doctor", "data-state") or "?"
        shown = page.inner_text(".kb-doctor__status" if state == "error" else ".kb-doctor__verdict")
        browser.close()
    return state, seconds, shown.strip()[:200]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    repeated, distinct, mixed = OUT / "hostile-repeated-200MiB.log", OUT / "hostile-distinct-200MiB.log", OUT / "hostile-mixed-2GiB.log"
    write_repeated(repeated, 200 * MiB)
    write_distinct(distinct, 200 * MiB)
    wrapper = OUT / "hostile-wrapper-200MiB.log"
    write_wrapper(wrapper, 200 * MiB)
    write_mixed(mixed, 2048 * MiB)
    subprocess.run([sys.executable, "-m", "generator", "rules"], cwd=ROOT, check=True, capture_output=True)
    unmatched = OUT / "hostile-unmatched-200MiB.log"
    write_unmatched(unmatched, 200 * MiB)
    kb = [sys.executable, "-m", "generator", "diagnose", "--rules", "build/rules.json", "--format", "json"]
    # The default engine's first runs compile its patterns and keep them in its cache: not timed
    # here. Hyperscan has two sets: one for any log, and one compiled the first time a piece of
    # log is dense with matches (the first 1 MiB of the repeated log is), which costs seconds and
    # memory once per corpus; so the warm-up reads such a piece too.
    warm = OUT / "warm-up.log"
    with repeated.open("rb") as fh:
        warm.write_bytes(fh.read(MiB))
    measure.like_installed(OUT)
    timed(kb + [str(warm)])

    rows = []
    for name, log, runs, target in (("200 MiB, every line matches (repeated AER lines)", repeated, args.runs, "under 10 s, under 150 MB"),
                                    ("200 MiB, every line matches, no two alike (Xid, OOM)", distinct, args.runs, ""),
                                    ("200 MiB, one short line repeated ('Segmentation fault (core dumped)', a wrapper)",
                                     wrapper, args.runs, "under 10 s, under 150 MB"),
                                    ("2 GiB mixed (noise, one Xid line in ten)", mixed, 1, "bounded memory"),
                                    ("200 MiB of error-looking lines in the corpus's words, no two alike", unmatched,
                                     args.runs, "like a plain log")):
        walls, rss, count, leads = [], [], 0, 0
        for _ in range(runs):
            wall, peak, out = timed(kb + [str(log)])
            walls.append(wall)
            rss.append(peak)
            report = json.loads(out)
            count = sum(f["count"] for f in report["findings"])
            leads = len(report["resembles"])
        size = log.stat().st_size / MiB
        rows.append((name, size, walls, rss, count, leads, target))
        print(f"{name}: {statistics.median(walls):.1f} s, {max(rss):.0f} MiB, {count:,} matching lines, {leads} leads",
              flush=True)

    lines = [*section_head("Hostile logs: memory that does not grow with matches (bench/hostile_bench.py)"),
             "- Command: `kb diagnose --format json` with the default engine (Hyperscan when installed, its patterns compiled before the timed runs).", "",
             "| log | size | runs (s) | median s | peak RSS (MiB) | matching lines | closest-wording leads | target |",
             "|---|---:|---|---:|---:|---:|---:|---|"]
    for name, size, walls, rss, count, leads, target in rows:
        lines.append(f"| {name} | {size:,.0f} MiB | {', '.join(f'{w:.1f}' for w in walls)} | {statistics.median(walls):.1f} | "
                     f"{max(rss):.0f} | {count:,} | {leads} | {target} |")
    if not args.no_browser:
        gib = OUT / "hostile-repeated-1GiB.log"
        write_repeated(gib, 1024 * MiB)
        site = OUT / "site"
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)], cwd=ROOT, check=True,
                       env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
        state, seconds, shown = browser_gib(site, gib)
        lines += ["", f"In the browser (Chromium, headless), 1 GiB of matching lines, file chosen to result: state "
                      f"`{state}` after {seconds:.0f} s; the page showed: \"{shown}\"."]
        print(f"browser 1 GiB: {state} after {seconds:.0f} s: {shown}", flush=True)
    write_section("hostile", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
