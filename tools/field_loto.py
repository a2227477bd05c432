"""Leave-thread-out score of the field sample's dev part: the matcher on each dev log with
nothing the corpus took from that log's own thread.

Why. Dev logs are read to write signatures, so the dev score flatters (88 % when the untouched
holdout gives 72 %). Most of the gap is the signatures and example lines written from the very
thread a dev log came from. Taking them away again, one thread at a time, gives a figure for
unseen material that can be read case by case, unlike the holdout's: the misses it lists are
fair to study for changes to the engine (reading, ranking, the closest wording), never for a
signature aimed at the listed case.

How. For each dev case, its thread (the label's ``source``, without fragment or trailing slash):
- the closest-wording index is rebuilt without the example lines that cite the thread, and
  without the counter-examples found word for word in the case's log and in no other log of the
  folder (a counter-example carries no source: one copied from the thread is known by being in
  its log alone; a line many logs hold, a sibling failure's message, is not the thread's own);
- signatures written from the thread are switched off (their pattern can no longer match):
  ``--mode lenient`` those whose every example cites it, ``--mode strict`` (default) those with
  any example from it, since a pattern widened for one more thread's wording was shaped by it.
A case whose thread the corpus does not cite, and whose log holds no counter-example of its own,
is diagnosed with the full rules. Healthy logs are scored the same way (a finding on them is a
false positive).

    .venv/bin/python tools/field_loto.py [--mode strict|lenient] [--misses] [FOLDER]

FOLDER defaults to tests/fixtures/field/dev. Never point it at the holdout with ``--misses``.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.cli.diagnose import make_diagnoser, named, right_first  # noqa: E402
from generator.corpus.validated import load_corpus  # noqa: E402
from generator.exports.rules import compile_rules  # noqa: E402
from generator.matcher.resemble import index_for  # noqa: E402
from tools.field_merge import _norm as norm  # noqa: E402

NEVER = r"\x00kb-loto-switched-off\x00"  # a pattern no log line can hold (lines never carry NUL here)


@dataclass
class Outcome:
    case: str
    family: str
    expected: list[str]
    failures: list[str]  # what the report names as failures, and everything it names (`named`)
    got: list[str]
    healthy: bool
    cited: bool

    @property
    def right(self) -> bool:  # as `kb eval` scores top-1
        return right_first(self.failures, self.got, self.expected)


MIN_COPIED = 12  # a shorter counter-example ('Killed') may be in a log without having been copied from it


def counter_examples(entries: list) -> dict[str, str]:
    """Every counter-example long enough to be told apart as copied, with the text searched for
    (without surrounding space); gathered once for all logs."""
    return {c: c.strip() for e in entries for s in e.signatures for c in s.counter_examples
            if len(c.strip()) >= MIN_COPIED}


def copied(counters: dict[str, str], log: str) -> set[str]:
    """The counter-examples (from ``counter_examples``) that occur word for word in ``log``."""
    return {c for c, text in counters.items() if text in log}


def own(found: dict[str, set[str]]) -> dict[str, set[str]]:
    """Per case, the counter-examples found in its log and in no other case's log: those were
    copied from its thread (a line many logs hold, such as a sibling failure's message, is not)."""
    holders = Counter(c for cs in found.values() for c in cs)
    return {case: {c for c in cs if holders[c] == 1} for case, cs in found.items()}


def _without(entries: list, thread: str, drop: set[str] = frozenset(),
             off: set[tuple[str, str]] = frozenset()) -> list:
    """Light copies of the entries without the example lines that cite ``thread``, without the
    counter-examples in ``drop`` and with the signatures in ``off`` switched off (for index_for,
    which reads a failure's patterns to tell its line among the notes' counter-examples)."""
    out = []
    for e in entries:
        sigs = [SimpleNamespace(id=s.id, pattern=NEVER if (e.id, s.id) in off else s.pattern,
                                examples=[x for x in s.examples if norm(x.source) != thread],
                                counter_examples=[c for c in s.counter_examples if c not in drop])
                for s in e.signatures]
        out.append(SimpleNamespace(id=e.id, title=e.title, aliases=e.aliases, severity=e.severity, wrapper=e.wrapper,
                                   signatures=sigs))
    return out


def switched_off(entries: list, thread: str, mode: str) -> set[tuple[str, str]]:
    """(entry, signature) pairs written from ``thread``."""
    off = set()
    for e in entries:
        for s in e.signatures:
            from_thread = [norm(x.source) == thread for x in s.examples]
            if from_thread and (all(from_thread) if mode == "lenient" else any(from_thread)):
                off.add((e.id, s.id))
    return off


@dataclass
class Prepared:
    """The corpus and its full rules, loaded once for any number of runs (both modes)."""

    entries: list
    full: dict
    cited: set[str]


def prepare() -> Prepared:
    corpus = load_corpus()
    entries = list(corpus.entries)
    return Prepared(entries, compile_rules(corpus),
                    {norm(x.source) for e in entries for s in e.signatures for x in s.examples})


def run(folder: Path, mode: str, prepared: Prepared | None = None) -> list[Outcome]:
    p = prepared or prepare()
    entries, full, cited = p.entries, p.full, p.cited
    full_diagnoser = make_diagnoser(full, "auto")
    labels = yaml.safe_load((folder / "labels.yaml").read_text(encoding="utf-8"))
    logs = {str(label["id"]): (folder / "cases" / f"{label['id']}.log").read_bytes() for label in labels}
    counters = counter_examples(entries)
    drops = own({case: copied(counters, data.decode("utf-8", "replace")) for case, data in logs.items()})
    outcomes = []
    for label in labels:
        thread = norm(str(label["source"]))
        data = logs[str(label["id"])]
        drop = drops[str(label["id"])]
        if thread in cited or drop:
            off = switched_off(entries, thread, mode)
            rules = dict(full)
            rules["signatures"] = [dict(s, pattern=NEVER) if (s["entry"], s["id"]) in off else s
                                   for s in full["signatures"]]
            rules["resemble"] = index_for(_without(entries, thread, drop, off))
            diagnoser = make_diagnoser(rules, "python")
        else:
            diagnoser = full_diagnoser
        failures, got = named(diagnoser.diagnose(io.BytesIO(data)))
        expected = [str(label["expected"]), *map(str, label.get("also_acceptable") or [])]
        outcomes.append(Outcome(str(label["id"]), str(label.get("family", "")), expected, failures, got,
                                label["expected"] == "none", thread in cited))
    return outcomes


def refuses_holdout_misses(tool: str, folder: Path, misses: bool) -> bool:
    """Whether a tool asked to list the misses of the holdout must refuse (it says so): nobody
    reads them (tests/fixtures/field/README.md)."""
    if misses and "holdout" in folder.resolve().parts:
        print(f"{tool}: nobody reads the holdout's misses; drop --misses", file=sys.stderr)
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default=str(ROOT / "tests/fixtures/field/dev"))
    ap.add_argument("--mode", choices=("strict", "lenient"), default="strict")
    ap.add_argument("--misses", action="store_true", help="list each miss (dev only)")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    if refuses_holdout_misses("field_loto", folder, args.misses):
        return 2
    outcomes = run(folder, args.mode)
    failing = [o for o in outcomes if not o.healthy]
    healthy = [o for o in outcomes if o.healthy]
    right = sum(o.right for o in failing)
    print(f"leave-thread-out ({args.mode}): top-1 {right}/{len(failing)} ({100 * right / max(1, len(failing)):.0f} %), "
          f"false positives {sum(not o.right for o in healthy)}/{len(healthy)}")
    cited = [o for o in failing if o.cited]
    print(f"  logs whose thread the corpus cites: {sum(o.right for o in cited)}/{len(cited)}; "
          f"others {sum(o.right for o in failing if not o.cited)}/{len(failing) - len(cited)}")
    for family in sorted({o.family for o in failing}):
        mine = [o for o in failing if o.family == family]
        print(f"  {family}: {sum(o.right for o in mine)}/{len(mine)}")
    if args.misses:
        for o in outcomes:
            if not o.right:
                print(f"  miss {o.case}: expected {o.expected[0]}, got {', '.join(o.got[:3]) or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
