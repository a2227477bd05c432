"""bench/results.md is shared by several benchmarks: each owns one marked section."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results.md"
HEADER = "# Benchmark results\n\nWritten by `make bench`. Each section is rewritten by the benchmark that owns it.\n"


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
