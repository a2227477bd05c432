"""Score the diagnosis on the dev field sample reshaped the ways a pasted log arrives.

The field sample (tests/fixtures/field/dev) was collected clean: HTML entities decoded, one line
per line. Readers paste from rendered pages, chat clients, mails, container log files and
terminals. Each reshaping below rewrites every dev log one way (labels unchanged) and scores it
like `kb eval`; a drop against the plain sample is something the matcher fails to read, found
without anyone writing a new fixture. Only dev is used: the holdout stays untouched.

Writes the "Pasted logs" section of bench/results.md.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

from bench.results_file import section_head, write_section  # noqa: E402
import yaml  # noqa: E402

from generator.cli.diagnose import ensure_rules, evaluate, make_diagnoser  # noqa: E402

DEV = ROOT / "tests" / "fixtures" / "field" / "dev"


def _lines(text: str) -> list[str]:
    return text.splitlines(True)


def _wrap80(text: str) -> str:
    out = []
    for line in text.splitlines():
        out += [line[i:i + 80] for i in range(0, max(len(line), 1), 80)] or [""]
    return "\n".join(out) + "\n"


RESHAPES = {
    "as collected": lambda t: t,
    "no-break spaces between words (a rendered page, a chat client)": lambda t: t.replace(" ", "\u00a0"),
    "HTML-escaped (page source, a mail)": lambda t: t.replace("&", "&amp;").replace("<", "&lt;").replace(
        ">", "&gt;").replace('"', "&quot;").replace("'", "&#39;"),
    "quoted in a reply (`> ` before each line)": lambda t: "".join("> " + x for x in _lines(t)),
    "container runtime log file (`<time> stderr F ` before each line)": lambda t: "".join(
        "2024-05-01T10:11:12.345678Z stderr F " + x for x in _lines(t)),
    "line-number gutter (`  12 | `)": lambda t: "".join(f"{i + 1:>4} | {x}" for i, x in enumerate(_lines(t))),
    "ANSI red around each line": lambda t: "".join(
        "\x1b[31m" + x.rstrip("\n") + "\x1b[0m\n" if x.strip() else x for x in _lines(t)),
    "CRLF line ends": lambda t: t.replace("\n", "\r\n"),
    "typographic quotes": lambda t: re.sub(r"'([^'\n]*)'", "\u2018\\1\u2019", t).replace('"', "\u201c"),
    "indented 4 spaces (a Markdown code block)": lambda t: "".join("    " + x for x in _lines(t)),
    "hard-wrapped at 80 columns": _wrap80,
    "whole log on one line with literal `\\n` (JSON-escaped)": lambda t: t.replace("\n", "\\n") + "\n",
}


def _reshaped(folder: Path, labels: list[dict], reshape) -> Path:  # noqa: ANN001
    (folder / "cases").mkdir(parents=True)
    shutil.copy(DEV / "labels.yaml", folder / "labels.yaml")
    for item in labels:
        text = (DEV / "cases" / f"{item['id']}.log").read_bytes().decode("utf-8", "replace")
        (folder / "cases" / f"{item['id']}.log").write_text(reshape(text), encoding="utf-8", newline="")
    return folder


def main() -> int:
    diagnoser = make_diagnoser(ensure_rules(None))
    labels = yaml.safe_load((DEV / "labels.yaml").read_text(encoding="utf-8"))
    lines = section_head("Pasted logs: the dev field sample reshaped as pastes arrive (bench/paste_eval.py)")
    lines += [f"- Corpus: {len(diagnoser.rules['entries'])} entries, {len(diagnoser.rules['signatures'])} signatures",
              "- Each row rewrites every dev log one way, labels unchanged; the holdout is not used.", "",
              "| reshaped as | failure logs right first | lost against as collected | false positives on healthy logs |",
              "|---|---:|---:|---:|"]
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, reshape) in enumerate(RESHAPES.items()):
            results = evaluate(_reshaped(Path(tmp) / str(n), labels, reshape), diagnoser)
            failing = [r for r in results if r.expected != "none"]
            right = {r.case for r in failing if r.top1}
            fp = sum(1 for r in results if r.expected == "none" and not r.top1)
            healthy = sum(1 for r in results if r.expected == "none")
            if base is None:
                base = right
            lost = len(base - right)
            lines.append(f"| {name} | {len(right)}/{len(failing)} | {lost} | {fp}/{healthy} |")
            print(f"{name}: {len(right)}/{len(failing)}, lost {lost}, false positives {fp}/{healthy}", flush=True)
    write_section("paste", "\n".join(lines) + "\n")
    print("wrote the pasted-logs section of bench/results.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
