"""`make bench`, whole jobs: 64 logs of 50 MiB (3.2 GiB) in one `kb diagnose` run.

Measures the wall time and the peak memory of the whole process tree (the command and its
worker processes, summed, sampled every 50 ms from /proc) with one process (--jobs 1) and
with one worker per core, and the report's agreement between the two. The 64 inputs are
the same 50 MiB of bench/noise.py output (realistic noise with real failure lines planted)
under 64 names in 16 node folders (node-NN/rank-M.log), so they sit in the page cache: the
figures are the matcher's, not the disk's. Each input is its own source of the report.

Usage: python bench/job_bench.py [--files 64] [--mib 50]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from noise import write_log  # noqa: E402
from results_file import section_head, write_section  # noqa: E402


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                children = (task / "children").read_text().split()
                stack.extend(int(c) for c in children)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def run(args: list[str]) -> tuple[float, int, dict]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:  # files: a full pipe would stall the command
        start = time.perf_counter()
        proc = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=err)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _tree_rss(proc.pid))
            time.sleep(0.05)
        elapsed = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"kb diagnose failed: {err.read().decode()[-500:]}")
        return elapsed, peak, json.loads(out.read())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=64)
    parser.add_argument("--mib", type=int, default=50)
    opts = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="kb-job-bench-") as tmp:
        base = Path(tmp) / "noise.log"
        write_log(base, opts.mib << 20, planted=100)
        job = Path(tmp) / "job"
        for i in range(opts.files):
            folder = job / f"node-{i // 4:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            os.symlink(base, folder / f"rank-{i}.log")
        total = opts.files * base.stat().st_size
        subprocess.run(["cat", *[str(p) for p in sorted(job.rglob("*.log"))]], stdout=subprocess.DEVNULL, check=True)  # warm the cache
        def kb(target: Path) -> list[str]:
            return [sys.executable, "-m", "generator", "diagnose", str(target), "--format", "json"]

        # one untimed run on a small input first: the rules and the prefilter's database are built
        # and cached once, as on any machine after its first diagnosis, and not inside a timed run
        small = Path(tmp) / "small.log"
        with base.open("rb") as fh:
            small.write_bytes(fh.read(1 << 20))
        subprocess.run(kb(small), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        one_s, one_rss, one = run([*kb(job), "--jobs", "1"])
        many_s, many_rss, many = run([*kb(job), "--jobs", str(cores)])
    same = one == many
    gib = total / (1 << 30)
    lines = [*section_head("Whole jobs: many inputs in one kb diagnose run (bench/job_bench.py)"),
             f"- Input: {opts.files} files of {opts.mib} MiB ({gib:.2f} GiB), 16 node folders; engine auto (Hyperscan, else RE2, else Python); rules and prefilter built before the timed runs",
             "",
             "| run | wall s | MiB/s | peak memory of the process tree | target |",
             "|---|---:|---:|---:|---|",
             f"| one process (--jobs 1) | {one_s:.1f} | {total / one_s / (1 << 20):.0f} | {one_rss / (1 << 20):.0f} MiB | under 300 MB |",
             f"| {cores} worker processes (--jobs {cores}) | {many_s:.1f} | {total / many_s / (1 << 20):.0f} | "
             f"{many_rss / (1 << 20):.0f} MiB | under 300 MB, at least 1.6x one process |",
             "",
             f"Speed-up with {cores} workers: {one_s / many_s:.2f}x. Same report from both runs: {'yes' if same else 'NO'} "
             f"({len(one['sources'])} sources, {len(one['findings'])} findings, root {one['findings'][0]['id'] if one['findings'] else 'none'})."]
    body = "\n".join(lines)
    write_section("job", body)
    print(body)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
