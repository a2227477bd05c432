"""`make bench`, part two: `kb diagnose` throughput and memory beside `grep -E -f`.

Generates a 400 MiB log of realistic noise with 300 real failure lines (bench/noise.py),
converts every signature pattern of the corpus to POSIX ERE, and times in the same run:
`grep -E -c -f patterns.ere` (LC_ALL=C, output to a pipe so grep reads the whole file),
`kb diagnose` with each engine (hyperscan when installed, re2, python).

GNU grep builds its DFA lazily and caps the states it keeps; the corpus's bounded repeats
(`[^"]{0,300}`) expand into so many positions that, past about 1,550 patterns, the DFA no longer
fits, is flushed over and over, and grep crawls (1,974 patterns: 54 s for 2 MiB). The exact set
is therefore timed once on a 2 MiB slice with a time limit and reported, and the baseline runs on
the same patterns with each bounded repeat widened to an unbounded one (`{0,n}` -> `*`,
`{1,n}` -> `+`, `{m,n}` -> `{m,}`): a superset that grep's DFA holds. Each is run several
times; medians are reported, with peak memory (max RSS) of every process. The Hyperscan
engine keeps its compiled database in a cache folder: its first run here starts from an empty
one (bench/out/cache) and is reported apart. The engines' reports on the big log must be the
same (the bench stops otherwise). kb's modules run from cached bytecode, as in an installed kb
(the cold run fills that cache too). A 20 MiB log is also diagnosed to show that memory does not
grow with the size of the input.

Usage: python bench/diagnose_bench.py [--mib 400] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import measure  # noqa: E402
from noise import write_log  # noqa: E402
from results_file import section_head, write_section  # noqa: E402

from generator.matcher.native import hsscan  # noqa: E402
from generator.corpus.validated import load_corpus  # noqa: E402

_CLASS_ESCAPES = {"d": "0-9", "s": "[:space:]", "w": "[:alnum:]_"}
_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "s": "[[:space:]]", "S": "[^[:space:]]", "w": "[[:alnum:]_]", "W": "[^[:alnum:]_]",
            "t": "\t"}


def to_ere(pattern: str) -> str:
    """Python regex to GNU grep -E syntax, for the patterns the corpus uses."""
    ignore_case = pattern.startswith("(?i)")
    p = pattern.removeprefix("(?i)")
    out: list[str] = []
    i, in_class = 0, False
    while i < len(p):
        ch = p[i]
        if ch == "\\" and i + 1 < len(p):
            nxt = p[i + 1]
            if in_class and nxt in _CLASS_ESCAPES:
                out.append(_CLASS_ESCAPES[nxt])
            elif in_class and nxt in "-]\\":
                out.append({"-": "-", "]": "]", "\\": "\\\\"}[nxt])
            elif not in_class and nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
            elif not in_class and nxt == "-":
                out.append("-")
            else:
                out.append(p[i:i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
        elif p.startswith("(?:", i):
            out.append("(")
            i += 3
            continue
        elif p.startswith("(?P<", i):
            i = p.index(">", i) + 1
            out.append("(")
            continue
        elif ch in "*+?" and p[i + 1:i + 2] == "?":
            out.append(ch)
            i += 2
            continue
        elif ignore_case and ch.isalpha():
            out.append(f"[{ch.lower()}{ch.upper()}]")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def widen_repeats(ere: str) -> str:
    """The same ERE with every bounded repeat made unbounded (a superset grep's DFA can hold)."""
    ere = re.sub(r"\{0,[0-9]+\}", "*", ere)
    ere = re.sub(r"\{1,[0-9]+\}", "+", ere)
    return re.sub(r"\{([0-9]+),[0-9]+\}", r"{\1,}", ere)


def exact_probe(ere_file: Path, slice_log: Path, limit: float) -> float | None:
    """Seconds grep takes over ``slice_log`` with the exact patterns, or None past ``limit``."""
    start = time.perf_counter()
    try:
        subprocess.run(["grep", "-E", "-c", "-f", str(ere_file), str(slice_log)], capture_output=True,
                       env={**os.environ, "LC_ALL": "C"}, timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - start


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, bytes]:
    """Wall seconds, peak RSS in MiB (bench/measure.py) and stdout of one run of ``cmd``."""
    wall, rss, status, out, _ = measure.timed(cmd, ROOT, env)
    if status not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed with status {status}")
    return wall, rss, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=400)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    big = OUT / f"noise-{args.mib:g}MiB.log"
    small = OUT / "noise-20MiB.log"
    info = write_log(big, int(args.mib * 1024 * 1024))
    write_log(small, 20 * 1024 * 1024)
    size_mib = big.stat().st_size / 1024 / 1024

    corpus = load_corpus(ROOT / "kb" / "entries")
    patterns, skipped = [], []
    for e in corpus.entries:
        for s in e.signatures:
            ere = to_ere(s.pattern)
            ok = subprocess.run(["grep", "-E", "-e", ere, "/dev/null"], capture_output=True).returncode != 2
            (patterns if ok else skipped).append(ere if ok else f"{e.id}:{s.id}")
    patterns.append("NVRM: Xid \\(")  # the matcher's Xid parser
    exact_file = OUT / "patterns-exact.ere"
    exact_file.write_text("\n".join(patterns) + "\n", encoding="utf-8")
    ere_file = OUT / "patterns.ere"
    ere_file.write_text("\n".join(widen_repeats(p) for p in patterns) + "\n", encoding="utf-8")
    probe_log = OUT / "noise-2MiB.log"
    write_log(probe_log, 2 * 1024 * 1024)
    probe_limit = 120.0
    probe = exact_probe(exact_file, probe_log, probe_limit)
    print(f"grep, exact patterns, 2 MiB: {'over %.0f s' % probe_limit if probe is None else '%.2f s' % probe}", flush=True)

    # the bench's own rules file: a `kb rules` run elsewhere while the bench runs cannot change it
    rules_file = OUT / "rules.json"
    subprocess.run([sys.executable, "-m", "generator", "rules", "--output", str(rules_file)], cwd=ROOT, check=True,
                   capture_output=True)
    cache = OUT / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["KB_CACHE_DIR"] = str(cache)  # the runs below share it; the first hyperscan run fills it
    measure.like_installed(OUT)
    kb = [sys.executable, "-m", "generator", "diagnose", "--rules", str(rules_file), "--format", "json"]
    env_c = {**os.environ, "LC_ALL": "C"}
    commands = {
        "grep -E -c -f patterns.ere": (["grep", "-E", "-c", "-f", str(ere_file), str(big)], env_c),
        "kb diagnose --engine re2": (kb + ["--engine", "re2", str(big)], None),
        **({"kb diagnose --engine hyperscan": (kb + ["--engine", "hyperscan", str(big)], None)} if hsscan.available() else {}),
        "kb diagnose --engine python": (kb + ["--engine", "python", str(big)], None),
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    grep_lines = kb_lines = 0
    reports: dict[str, dict] = {}
    cold = None
    if hsscan.available():  # the first run, from an empty cache: compiles the database
        cold = timed(commands["kb diagnose --engine hyperscan"][0])
        print(f"cold: hyperscan: {cold[0]:.2f} s, {cold[1]:.0f} MiB", flush=True)
    for r in range(args.runs):  # interleaved, so drift in machine load hits every tool alike
        for name, (cmd, env) in commands.items():
            wall, rss, out = timed(cmd, env)
            results[name].append((wall, rss))
            if name.startswith("grep"):
                grep_lines = int(out.strip() or 0)
            else:
                report = json.loads(out)
                report.pop("elapsed", None)
                reports[name] = report
                if name.endswith("re2"):
                    kb_lines = sum(len({e["line"] for e in f["evidence"]}) and f["count"] for f in report["findings"])
            print(f"run {r + 1}: {name}: {wall:.2f} s, {rss:.0f} MiB", flush=True)
    small_rss = {engine: timed(kb + ["--engine", engine, str(small)])[1] for engine in ("re2", "python")}
    differing = [name for name, report in reports.items() if report != reports["kb diagnose --engine re2"]]
    if differing:
        raise SystemExit(f"the engines disagree on {big.name}: {', '.join(differing)} differ from re2")

    grep_med = statistics.median(w for w, _ in results["grep -E -c -f patterns.ere"])
    lines = [
        *section_head("Log diagnosis throughput and memory (bench/diagnose_bench.py)"),
        f"- Input: {size_mib:.0f} MiB, {info['lines']:,} lines of realistic noise with {info['planted']} real failure lines"
        " from the corpus's examples (bench/noise.py).",
        f"- Patterns: {len(patterns)} ({len(patterns) - 1} corpus signatures converted to POSIX ERE, plus the Xid line)"
        + (f"; not convertible to ERE: {', '.join(skipped)}" if skipped else "") + ".",
        "- grep runs the patterns with bounded repeats widened to unbounded ones (a superset of what they "
        "match): with the exact patterns its DFA overflows its state cache; over a 2 MiB slice of the same "
        "noise the exact set took "
        + (f"more than {probe_limit:.0f} s (stopped)" if probe is None else f"{probe:.2f} s") + ".",
        f"- grep counted {grep_lines:,} matching lines; kb diagnose reported {kb_lines:,} hits (one per line and entry).",
        "- Wall time of the whole command (start-up and reading included); medians of the runs listed.",
        "- Every engine gave the same report on this log (the bench checks it).",
        *([f"- Hyperscan's first run, with an empty cache (compiling its database): {cold[0]:.2f} s, "
           f"{cold[1]:.0f} MiB; the runs below find the database in the cache."] if cold else []),
        "",
        "| command | runs (s) | median s | MiB/s | throughput vs grep | peak RSS |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, runs in results.items():
        med = statistics.median(w for w, _ in runs)
        lines.append(f"| `{name}` | {', '.join(f'{w:.2f}' for w, _ in runs)} | {med:.2f} | {size_mib / med:.0f} | "
                     f"{grep_med / med:.2f} | {max(r for _, r in runs):.0f} MiB |")
    lines += [
        "",
        f"Peak RSS on a 20 MiB log: re2 engine {small_rss['re2']:.0f} MiB, python engine {small_rss['python']:.0f} MiB "
        f"(against {max(r for _, r in results['kb diagnose --engine re2']):.0f} and "
        f"{max(r for _, r in results['kb diagnose --engine python']):.0f} MiB on {size_mib:.0f} MiB): memory does not grow "
        "with the input. Targets: at least half of grep's throughput, peak memory under 150 MB; with Hyperscan, "
        "at least 4x grep's throughput.",
    ]
    write_section("diagnose", "\n".join(lines))
    print("wrote the diagnose section of bench/results.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
