"""How many signature examples still name their entry when a wrapper drops the exception class.

Real logs often print a library's message without the ``XxxError: `` in front of it (a wrapper
that logs ``str(e)``, a UI that shows the message only, a line whose start a terminal cut). This
takes every signature example line with such a prefix, cuts the prefix, and diagnoses the rest
alone (when 25 characters or more are left): the entry should still come first unless the
message alone is too generic to name it (then the signature keeps the prefix on purpose).

    .venv/bin/python tools/prefix_variants.py [--list]

Prints the count; ``--list`` also prints each example that no longer names its entry.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.cli.diagnose import make_diagnoser, named  # noqa: E402
from generator.corpus.validated import load_corpus  # noqa: E402
from generator.exports.rules import compile_rules  # noqa: E402

PREFIX = re.compile(r"^.*?\b[A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Failure|Abort)\b:\s+")
MIN_REST = 25


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print each cut example that no longer names its entry")
    args = ap.parse_args(argv)
    corpus = load_corpus()
    diagnoser = make_diagnoser(compile_rules(corpus), "auto")
    total, lost = 0, []
    for entry in corpus.entries:
        for signature in entry.signatures:
            for example in signature.examples:
                m = PREFIX.match(example.line)
                rest = example.line[m.end():] if m else ""
                if len(rest) < MIN_REST:
                    continue
                total += 1
                _, got = named(diagnoser.diagnose_text(rest))
                if got[:1] != [entry.id]:
                    lost.append((entry.id, signature.id, rest, got[:2]))
    print(f"examples with an exception-class prefix: {total}; naming their entry first without it: "
          f"{total - len(lost)}; not: {len(lost)}")
    if args.list:
        for entry_id, signature_id, rest, got in lost:
            print(f"  {entry_id} {signature_id}: {rest[:120]!r} -> {', '.join(got) or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
