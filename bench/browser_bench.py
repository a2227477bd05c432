"""`make bench`, part three: the in-browser log doctor in headless Chromium.

Builds the site, serves it on 127.0.0.1 (with its CSP header, caching off) and measures:
- time to the first result from a cold load: a fresh browser context opens /diagnose/,
  pastes a small real log and waits for the report (Pyodide download, compile and start
  included), from navigation start and from the click;
- the same when /diagnose/ had been open for 3 s before the paste and click (the doctor starts
  Python there as soon as the page is idle), and when an entry page's compact box had focus for
  3 s (there Python starts only when the box gets focus or text);
- the time for a 1 MiB and a 50 MiB log once Python is warm (file chosen to report shown);
- what an entry page transfers before the reader uses its box, and whether any of it is
  Pyodide.

Usage: python bench/browser_bench.py [--runs 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from browser import CHROMIUM, launch  # noqa: E402
from noise import write_log  # noqa: E402
from results_file import section_head, write_section  # noqa: E402
from site_server import SiteServer  # noqa: E402

SMALL_LOG = ROOT / "tests" / "fixtures" / "logs" / "cases" / "107.log"
WAIT_MS = 180_000


def wait_done(page) -> None:
    page.wait_for_selector(".kb-doctor[data-state=done], .kb-doctor[data-state=error]", timeout=WAIT_MS)
    state = page.get_attribute(".kb-doctor", "data-state")
    if state != "done":
        raise SystemExit(f"the doctor failed: {page.inner_text('.kb-doctor__status')}")


def analyse_responsively(page, site: str, selector: str, files) -> tuple[float, list[float]]:  # noqa: ANN001
    """Choose ``files`` on /diagnose/ and wait for the report, probing the page every 0.25 s
    meanwhile; returns the seconds taken and each probe's round trip."""
    page.goto(site + "/diagnose/")
    start = time.perf_counter()
    page.set_input_files(selector, files)
    page.wait_for_selector(".kb-doctor[data-state=analysing]", timeout=WAIT_MS)
    trips = []
    while page.get_attribute(".kb-doctor", "data-state") == "analysing":
        t = time.perf_counter()
        page.evaluate("document.querySelector('.kb-doctor__status').textContent.length")
        trips.append(time.perf_counter() - t)
        time.sleep(0.25)
    wait_done(page)
    return time.perf_counter() - start, trips


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit("the browser benchmark needs /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    site = OUT / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "--strict", "-d", str(site)], cwd=ROOT, env=env, check=True)
    OUT.mkdir(parents=True, exist_ok=True)
    one = OUT / "noise-1MiB.log"
    fifty = OUT / "noise-50MiB.log"
    huge = OUT / "noise-200MiB.log"
    write_log(one, 1 << 20, planted=5)
    write_log(fifty, 50 << 20, planted=100)
    write_log(huge, 200 << 20, planted=300)
    job_dir = OUT / "job-16x20MiB"
    job_dir.mkdir(exist_ok=True)
    job_files = []
    for i in range(16):
        path = job_dir / f"node-{i // 8}-rank-{i}.log"
        write_log(path, 20 << 20, planted=20, seed=100 + i)
        job_files.append(path)
    small_text = SMALL_LOG.read_text(encoding="utf-8")

    cold_nav, cold_click, opened, focused, warm = [], [], [], [], {one.name: [], fifty.name: []}
    entry_bytes, entry_pyodide = [], []
    with SiteServer(site) as server, sync_playwright() as p:
        browser = launch(p)
        for r in range(args.runs):
            ctx = browser.new_context()
            page = ctx.new_page()
            t0 = time.perf_counter()
            page.goto(server.url + "/diagnose/")
            page.fill(".kb-doctor textarea", small_text)
            t1 = time.perf_counter()
            page.click(".kb-doctor button:has-text('Diagnose')")
            wait_done(page)
            t2 = time.perf_counter()
            cold_nav.append(t2 - t0)
            cold_click.append(t2 - t1)
            for log in (one, fifty):
                page.set_input_files(".kb-doctor input[type=file][multiple]", [])
                page.evaluate("document.querySelector('.kb-doctor').dataset.state = 'idle'")  # the last report is done
                start = time.perf_counter()
                page.set_input_files(".kb-doctor input[type=file][multiple]", str(log))
                wait_done(page)
                warm[log.name].append(time.perf_counter() - start)
            ctx.close()
            for path, times in (("/diagnose/", opened), ("/entries/xid-79/", focused)):
                ctx = browser.new_context()
                page = ctx.new_page()
                page.goto(server.url + path)
                page.focus(".kb-doctor textarea")
                page.wait_for_timeout(3000)
                page.fill(".kb-doctor textarea", small_text)
                t1 = time.perf_counter()
                page.click(".kb-doctor button:has-text('Diagnose')")
                wait_done(page)
                times.append(time.perf_counter() - t1)
                ctx.close()
            print(f"run {r + 1}: cold {cold_nav[-1]:.2f} s from navigation ({cold_click[-1]:.2f} s from the click), "
                  f"/diagnose/ open 3 s {opened[-1]:.2f} s, entry box focused 3 s {focused[-1]:.2f} s, "
                  f"1 MiB {warm[one.name][-1]:.2f} s, 50 MiB {warm[fifty.name][-1]:.2f} s", flush=True)

            ctx = browser.new_context()
            page = ctx.new_page()
            sizes: list[tuple[str, int]] = []
            page.on("response", lambda resp: sizes.append((resp.url, len(resp.body()) if resp.ok else 0)))
            page.goto(server.url + "/entries/xid-79/")
            page.wait_for_load_state("networkidle")
            entry_bytes.append(sum(n for _, n in sizes))
            entry_pyodide.append(sum(n for url, n in sizes if "/assets/pyodide/" in url or "/assets/doctor/" in url))
            ctx.close()
        # one 200 MiB file: streamed in pieces, the tab must stay responsive meanwhile
        ctx = browser.new_context()
        page = ctx.new_page()
        huge_s, round_trips = analyse_responsively(page, server.url, ".kb-doctor input[type=file][multiple]", str(huge))
        heap_mb = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : 0") / 1e6
        ctx.close()
        # a whole job: 16 files of 20 MiB chosen at once, one report; the tab must stay responsive
        ctx = browser.new_context()
        page = ctx.new_page()
        job_s, job_trips = analyse_responsively(page, server.url, ".kb-doctor input[type=file][multiple]",
                                                [str(p) for p in job_files])
        job_sources = len(json.loads(page.locator(".kb-doctor__json").text_content())["sources"])
        ctx.close()
        browser.close()

    med = statistics.median
    index = next((site / "assets" / "search").glob("index.*.json"))
    rows = [
        ("first result from a cold load, from navigation start", cold_nav, "at most 6 s"),
        ("first result from a cold load, from the click", cold_click, "at most 3 s"),
        ("first result when /diagnose/ had been open for 3 s, from the click", opened, "at most 1 s"),
        ("first result when an entry page's box had focus for 3 s, from the click", focused, "at most 1 s"),
        ("1 MiB log, Python warm (file chosen to report)", warm[one.name], ""),
        ("50 MiB log, Python warm (file chosen to report)", warm[fifty.name], "at most 3 s"),
    ]
    lines = [
        *section_head("In-browser log doctor (bench/browser_bench.py)"),
        "- Browser: Debian Chromium, headless, driven by Playwright; the site served from 127.0.0.1 with caching off,"
        " so every cold run downloads Pyodide again.",
        f"- Logs: {SMALL_LOG.relative_to(ROOT)} (cold runs); 1 MiB and 50 MiB of bench/noise.py output (warm runs).",
        "",
        "| measure | runs (s) | median s | target |",
        "|---|---|---:|---|",
    ]
    for name, runs, target in rows:
        lines.append(f"| {name} | {', '.join(f'{x:.2f}' for x in runs)} | {med(runs):.2f} | {target} |")
    lines += [
        "",
        f"An entry page (/entries/xid-79/) transfers {med(entry_bytes) / 1024:.0f} KiB before its log box is used, of which "
        f"{med(entry_pyodide)} bytes are Pyodide or the doctor's files (target: none).",
        f"The search index ({index.name}) is {index.stat().st_size / 1024:.0f} KiB ({len(gzip.compress(index.read_bytes())) / 1024:.0f} KiB"
        " gzipped) and loads only when the search box is first used; before the atlas had its own search, every page"
        " loaded the theme's 2,561 KiB full-text index (an entry page then transferred 2,921 KiB).",
    ]
    lines += [
        "",
        f"A 200 MiB log (one run, file chosen to report): {huge_s:.1f} s. While it was analysed, the page answered "
        f"{len(round_trips)} probes in at most {1000 * max(round_trips, default=0):.0f} ms (median "
        f"{1000 * med(round_trips or [0]):.0f} ms), and its JavaScript heap held {heap_mb:.1f} MB afterwards.",
    ]
    lines += [
        "",
        f"A whole job, 16 files of 20 MiB chosen at once (one run): one report of {job_sources} sources in {job_s:.1f} s; "
        f"the page answered {len(job_trips)} probes meanwhile in at most {1000 * max(job_trips, default=0):.0f} ms "
        f"(median {1000 * med(job_trips or [0]):.0f} ms).",
    ]
    write_section("browser", "\n".join(lines))
    print("wrote the browser section of bench/results.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
