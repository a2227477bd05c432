"""tools/field_why.py: each miss of the field sample put in one kind, counted per family."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import field_why  # noqa: E402

XID79 = b"[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"


@pytest.mark.parametrize(("log", "expected", "kind"), [
    (XID79, ["xid-79"], field_why.RIGHT),
    (XID79, ["cuda-out-of-memory"], field_why.WRONG_SIGNATURE),
    # the excerpt shows only progress: no line says that anything went wrong
    (b"Epoch 3: 100%|##########| 50/50 [00:12<00:00, 4.1it/s]\nsaving checkpoint\n", ["xid-79"], field_why.NO_ERROR_LINE),
    # a failure in words no example of the corpus uses
    (b"FrobnicatorError: the quuxwidget wibblesprocket failed to zarkle the plimbotron\n", ["xid-79"],
     field_why.NO_SHARED_WORD),
    (b"Epoch 3: 100%|##########| 50/50 [00:12<00:00, 4.1it/s]\n", ["none"], field_why.QUIET),
    (XID79, ["none"], field_why.FALSE_ALARM),
])
def test_each_outcome_is_told_apart(real_diagnoser, log: bytes, expected: list[str], kind: str) -> None:
    assert field_why.kind(real_diagnoser, log, expected) == kind


def test_a_line_sharing_rare_words_below_the_thresholds_is_told_from_one_sharing_none(real_diagnoser) -> None:
    """One rare word of an example (the DLL cuDNN 8 needs on Windows) among unknown ones: a
    candidate exists, too weak to lead; the same line without it shares nothing."""
    weak = b"FrobnicatorError: zlibwapi while zarkling the plimbotron wibblesprocket quuxwidget\n"
    assert field_why.kind(real_diagnoser, weak, ["xid-79"]) == field_why.BELOW
    none = weak.replace(b"zlibwapi", b"grommetstatus")
    assert field_why.kind(real_diagnoser, none, ["xid-79"]) == field_why.NO_SHARED_WORD


def test_the_table_counts_failure_logs_per_family_and_healthy_alarms() -> None:
    results = [({"family": "cuda", "expected": "a"}, field_why.RIGHT),
               ({"family": "cuda", "expected": "a"}, field_why.NO_ERROR_LINE),
               ({"family": "nccl", "expected": "b"}, field_why.NO_ERROR_LINE),
               ({"family": "nccl", "expected": "none"}, field_why.FALSE_ALARM),
               ({"family": "cuda", "expected": "none"}, field_why.QUIET)]
    rows = field_why.table(results)
    assert rows[0] == "| outcome | all | cuda | nccl |"
    assert f"| {field_why.NO_ERROR_LINE} | 2 | 1 | 1 |" in rows
    assert f"| {field_why.RIGHT} | 1 | 1 | 0 |" in rows
    assert "| failure logs | 3 | 2 | 1 |" in rows
    assert rows[-1] == "Healthy logs with a finding or a lead: 1/2."


def test_the_holdouts_misses_are_never_listed(capsys) -> None:
    assert field_why.main(["--misses", str(ROOT / "tests/fixtures/field/holdout")]) == 2
    assert "nobody reads the holdout's misses" in capsys.readouterr().err
