"""Why the field sample's misses are misses, counted: what the engine could and could not do.

A failure log the report does not name first is one of:
- ``wrong signature``: a signature's finding (or a hang) comes first, and it is not the label's;
- ``wrong lead``: no finding but a closest-wording lead, and the first is not the label's;
- ``nothing: no error-looking line``: no line of the log's tail says that something went wrong
  (resemble.says_wrong): the excerpt shows only symptoms, a progress bar, a table, or the
  failure in words no engine reads as one; no comparison of wordings can answer it;
- ``nothing: no example shares a rare word``: error-looking lines, but none shares a
  distinctive word with any example line of the corpus: the atlas has no entry written in
  these words (a class it lacks, or one it knows under other names);
- ``nothing: below the thresholds``: some example shares rare words with an error line, but
  too few (resemble.THRESHOLD, MIN_SHARED) or a quiet line resembles it as much.

The split tells engine work from breadth: only the last kind can a looser comparison reach.
Counts only for the holdout (nobody reads its misses); ``--misses`` lists dev cases.

    .venv/bin/python tools/field_why.py [--misses] [FOLDER]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from generator.cli.diagnose import ensure_rules, make_diagnoser, named, right_first  # noqa: E402
from generator.matcher import Diagnoser  # noqa: E402
from generator.matcher import resemble  # noqa: E402
from tools.field_loto import refuses_holdout_misses  # noqa: E402

RIGHT = "right"
WRONG_SIGNATURE = "wrong signature"
WRONG_LEAD = "wrong lead"
NO_ERROR_LINE = "nothing: no error-looking line"
NO_SHARED_WORD = "nothing: no example shares a rare word"
BELOW = "nothing: below the thresholds"
FALSE_ALARM = "healthy log: a finding or a lead"
QUIET = "healthy log: nothing"
KINDS = (RIGHT, WRONG_SIGNATURE, WRONG_LEAD, NO_ERROR_LINE, NO_SHARED_WORD, BELOW)


def _any_candidate(resembler: resemble.Resembler, lines: list) -> bool:
    """Whether any error line shares rare words with an example at all, thresholds aside."""
    kept = resembler.min_shared
    resembler.min_shared = 0.0
    try:
        return any(resembler._best(line.terms, resemble._last_word(line.text), resemble._first_word(line.text))
                   for line in lines)
    finally:
        resembler.min_shared = kept


def kind(diagnoser: Diagnoser, data: bytes, expected: list[str]) -> str:
    """The outcome of one labelled log (``expected`` ["none"] for a healthy one), as above."""
    session = diagnoser.session()  # as `kb eval` reads a case (Diagnoser.diagnose), keeping the job
    session.feed(data)
    report = session.finish()
    job = session.job
    failures, got = named(report)
    if expected[0] == "none":
        return QUIET if right_first(failures, got, expected) else FALSE_ALARM
    if right_first(failures, got, expected):  # as `kb eval` scores: a note may be the answer
        return RIGHT
    if got:
        return WRONG_LEAD if report.get("resembles") else WRONG_SIGNATURE
    if not job.loose:
        return NO_ERROR_LINE
    return BELOW if _any_candidate(diagnoser.resembler, job.loose) else NO_SHARED_WORD


def outcomes(folder: Path, diagnoser: Diagnoser) -> list[tuple[dict, str]]:
    """Each label of ``folder`` with its outcome."""
    labels = yaml.safe_load((folder / "labels.yaml").read_text(encoding="utf-8"))
    out = []
    for label in labels:
        expected = [str(label["expected"]), *map(str, label.get("also_acceptable") or [])]
        data = (folder / "cases" / f"{label['id']}.log").read_bytes()
        out.append((label, kind(diagnoser, data, expected)))
    return out


def table(results: list[tuple[dict, str]]) -> list[str]:
    """Markdown rows: each outcome over the failure logs, whole and per family."""
    failing = [(label, k) for label, k in results if label["expected"] != "none"]
    families = sorted({str(label.get("family", "")) for label, _ in failing})
    head = "| outcome | all | " + " | ".join(families) + " |"
    rows = [head, "|---|---:|" + "---:|" * len(families)]
    for k in KINDS:
        per = Counter(str(label.get("family", "")) for label, got in failing if got == k)
        rows.append(f"| {k} | {sum(per.values())} | " + " | ".join(str(per[f]) for f in families) + " |")
    rows.append(f"| failure logs | {len(failing)} | "
                + " | ".join(str(sum(1 for label, _ in failing if str(label.get('family', '')) == f)) for f in families) + " |")
    healthy = [k for label, k in results if label["expected"] == "none"]
    rows += ["", f"Healthy logs with a finding or a lead: {healthy.count(FALSE_ALARM)}/{len(healthy)}."]
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default=str(ROOT / "tests/fixtures/field/dev"))
    ap.add_argument("--misses", action="store_true", help="list each miss with its kind (dev only)")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    if refuses_holdout_misses("field_why", folder, args.misses):
        return 2
    diagnoser = make_diagnoser(ensure_rules(None), "auto")
    results = outcomes(folder, diagnoser)
    print("\n".join(table(results)))
    if args.misses:
        for label, k in results:
            if k not in (RIGHT, QUIET):
                print(f"  {label['id']}: {k} (expected {label['expected']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
