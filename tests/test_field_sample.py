"""The field sample (issue 12): complete labels, a holdout of one third per family, no false positives."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
import yaml

from generator.cli.diagnose import ensure_rules, evaluate, make_diagnoser

ROOT = Path(__file__).resolve().parents[1]
FIELD = ROOT / "tests" / "fixtures" / "field"
PARTS = ("dev", "holdout")


def _labels(part: str) -> list[dict]:
    return yaml.safe_load((FIELD / part / "labels.yaml").read_text(encoding="utf-8"))


def _record(name: str) -> set[str]:
    """The lines of a record file beside the sample (one item per line, # comments)."""
    text = (FIELD / name).read_text(encoding="utf-8")
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def test_every_case_has_its_log_source_query_and_expected_answer() -> None:
    ids = set()
    for part in PARTS:
        logs = {p.stem for p in (FIELD / part / "cases").glob("*.log")}
        labels = _labels(part)
        assert {str(item["id"]) for item in labels} == logs
        for item in labels:
            assert item["source"].startswith("https://") and item["query"] and int(item["position"]) >= 1
            assert item["family"] and item["expected"] and len(item["note"]) > 20
            ids.add(item["id"])
    assert len(ids) >= 150


def test_no_entry_cites_a_holdout_thread_beyond_the_recorded_ones() -> None:
    """Nobody writes from the untouched third: a thread of a holdout case cited by kb/entries
    (a reference or an example's source) is a leak unless holdout-cited.txt records it."""
    from tools.field_merge import _norm, cited_threads

    recorded = _record("holdout-cited.txt")
    held = {_norm(item["source"]) for item in _labels("holdout")}
    cited = cited_threads(ROOT / "kb" / "entries") & held
    assert not cited - recorded, f"entries cite holdout threads: {sorted(cited - recorded)}"
    assert recorded <= held  # the record names holdout threads only


def test_the_holdout_is_a_third_of_each_family() -> None:
    def failing(part: str) -> Counter:
        return Counter(i["family"] for i in _labels(part) if i["expected"] != "none")

    dev, held = failing("dev"), failing("holdout")
    for family in dev | held:
        total = dev[family] + held[family]
        assert held[family] == round(total / 3), family
    healthy = [i for p in PARTS for i in _labels(p) if i["expected"] == "none"]
    assert sum(1 for i in _labels("holdout") if i["expected"] == "none") == round(len(healthy) / 3)


@pytest.mark.parametrize("part", PARTS)
def test_no_finding_on_the_healthy_logs(part: str) -> None:
    old = Path.cwd()
    os.chdir(ROOT)
    try:
        results = evaluate(FIELD / part, make_diagnoser(ensure_rules(None)), detail=part != "holdout")
    finally:
        os.chdir(old)
    healthy = [r for r in results if r.expected == "none"]
    assert healthy
    # a holdout log recorded in holdout-healthy-leads.txt draws a closest-wording lead, and one in
    # holdout-healthy-findings.txt a signature finding, that nobody may study (both recorded when
    # their wave was scored at merge time); anything else named on a healthy log fails, and a
    # recorded case that no longer draws its kind of finding must leave its record
    leads = _record("holdout-healthy-leads.txt") if part == "holdout" else set()
    findings = _record("holdout-healthy-findings.txt") if part == "holdout" else set()
    wrong = {r.case: (r.got, r.resembled) for r in healthy if not r.top1}
    by_lead = {case for case, (_, resembled) in wrong.items() if resembled}
    assert set(wrong) - by_lead == findings, (f"signature findings on healthy logs: "
                                             f"{ {c: wrong[c] for c in set(wrong) - by_lead} }, recorded: {sorted(findings)}")
    assert by_lead == leads, f"healthy logs with a lead: {sorted(by_lead)}, recorded: {sorted(leads)}"


def test_scope_table_decides_every_thread_of_the_sample() -> None:
    """scope.tsv (SCOPE.md) holds one decision, in or out with a reason, for every case's thread
    and for no other URL: a wave merged without its threads would drop out of the scoped figure."""
    from tools.field_merge import _norm

    rows = [line.split("\t") for line in (FIELD / "scope.tsv").read_text(encoding="utf-8").splitlines()
            if not line.startswith("#")]
    assert all(len(row) == 3 and row[1] in ("in", "out") and row[2].strip() for row in rows), \
        [row for row in rows if len(row) != 3 or row[1] not in ("in", "out") or not row[2].strip()][:3]
    urls = [row[0] for row in rows]
    assert len(urls) == len(set(urls)), "a thread is decided twice"
    sources = {_norm(item["source"]) for part in PARTS for item in _labels(part)}
    assert set(urls) == sources, (sorted(sources - set(urls))[:5], sorted(set(urls) - sources)[:5])
