"""bench/results.md is shared by several benchmarks: each owns one marked section, which opens
with its title, the date and the machine it was measured on."""

from __future__ import annotations

import os
import platform
import re
import time
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results.md"
HEADER = "# Benchmark results\n\nWritten by `make bench`. Each section is rewritten by the benchmark that owns it.\n"


def machine() -> str:
    """Cores, CPU model, memory, OS and Python of this machine, in one line."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, AttributeError):
        pass
    return f"{os.cpu_count()} cores ({cpu}){mem}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def cpu_check() -> float:
    """Seconds of CPU a fixed Python loop takes, best of three: the shared machine's speed varies
    from hour to hour (0.36 s to 0.57 s on one evening), so runs are compared by it."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        sum(range(30_000_000))
        best = min(best, time.process_time() - start)
    return best


def section_head(title: str) -> list[str]:
    """The first lines of a section: its title, then the date and the machine of the measurement
    (with how fast it ran just then)."""
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [f"## {title}", "", f"- Date: {date}",
            f"- Machine: {machine()}; a fixed CPU loop (sum of 30 M integers) took {cpu_check():.2f} s when this was written"]


def write_section(name: str, body: str) -> None:
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else HEADER
    if not text.startswith("# Benchmark results"):
        text = HEADER
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        after = rest.split(end, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text, encoding="utf-8")
