"""Anchored signatures read a line behind the heads tools put before it (exports/line_heads.py)."""

from __future__ import annotations

import re

import pytest

from generator.exports.line_heads import HEADS, behind_line_heads
from generator.matcher.backtracking import risks
from generator.matcher.native.bytepattern import to_bytes

HEADED = [
    "[rank3]: {}", "[default3]:{}", "3: {}", "(RayWorkerWrapper pid=1054, ip=10.96.62.52) {}",
    "(VllmWorker rank=5 pid=3073) {}", "trainer-1  | {}", "[pod/train-0/main] {}",
    "2024-05-01T10:11:12.345678901Z stderr F {}", "2024-05-01T10:11:12.345678Z stderr F [rank3]: {}",
    "Jan  2 10:11:12 node1 python[1234]: {}", "Jan 02 10:11:12 node1 kernel: [ 812.123456] {}",
    "Apr 08 09:31:09 kernel: {}", "Apr  8 09:31:09 python3[77]: {}",  # journald export or paste with no host
    "[  812.123456] {}", "[1,3]<stderr>: {}", "[2024-05-01T10:11:12.123] {}", "2024-05-01 10:11:12,123 {}",
    "  12 | {}",
]
# The same word inside a sentence or an application's own log record stays unmatched.
PROSE = ["The process was {}", "INFO - {}", "2024-05-01 10:11:12,123 - INFO - {}", "foo bar | baz {}",
         "[rank3]: the job was {}", "{} process 935 (python)"]


@pytest.mark.parametrize("shape", HEADED)
def test_an_anchored_signature_reads_the_line_behind_a_head(shape: str) -> None:
    killed = re.compile(behind_line_heads(r"^\s*Killed\s*$"))
    rank = re.compile(behind_line_heads(r"^\s*'(?:LOCAL_)?RANK'\s*$"))
    assert killed.search(shape.format("Killed")) and rank.search(shape.format("'LOCAL_RANK'"))


@pytest.mark.parametrize("shape", PROSE)
def test_the_word_inside_a_sentence_still_does_not_match(shape: str) -> None:
    assert not re.search(behind_line_heads(r"^\s*Killed\s*$"), shape.format("Killed"))


def test_only_a_leading_anchor_changes_and_the_heads_are_safe_for_every_engine() -> None:
    assert behind_line_heads("CUDA error: out of memory") == "CUDA error: out of memory"
    assert behind_line_heads(r"(?:^|: )Killed$") == r"(?:^|: )Killed$"
    assert risks(behind_line_heads(r"^\s*Killed\s*$")) == ()
    assert to_bytes(behind_line_heads(r"^\s*Killed\s*$"))  # has a byte form (Hyperscan, RE2)
    assert risks("^" + HEADS + "x") == ()


def test_the_compiled_rules_carry_the_heads_and_the_matcher_uses_them(real_diagnoser) -> None:  # noqa: ANN001
    for line in ("[rank3]: Killed", "trainer-1  | Killed", "2024-05-01T10:11:12.345678Z stderr F Killed"):
        report = real_diagnoser.diagnose_text(line + "\n")
        assert [f["id"] for f in report["findings"]] == ["host-oom-kill"], line
    assert real_diagnoser.diagnose_text("INFO - Killed\n")["findings"] == []
