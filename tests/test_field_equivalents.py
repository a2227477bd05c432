"""tools/field_equivalents.py: label equivalences applied by rule, both ways or one way."""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import field_equivalents  # noqa: E402


def _label(expected: str, *also: str, family: str = "driver") -> dict:
    return {"id": "x", "family": family, "expected": expected, "also_acceptable": list(also)}


def test_a_two_way_rule_adds_each_id_to_labels_written_with_the_other() -> None:
    labels = [_label("nvml-driver-library-mismatch"), _label("driver-api-mismatch", "cuda-no-device")]
    assert field_equivalents.apply(labels) == 2
    assert labels[0]["also_acceptable"] == ["driver-api-mismatch"]
    assert labels[1]["also_acceptable"] == ["cuda-no-device", "nvml-driver-library-mismatch"]


def test_a_one_way_rule_adds_the_broader_id_only_to_labels_written_with_the_narrower() -> None:
    narrow, broad = _label("driver-not-loaded"), _label("container-toolkit-library-missing")
    field_equivalents.apply([narrow, broad])
    assert narrow["also_acceptable"] == ["container-toolkit-library-missing"]
    assert broad["also_acceptable"] == []


def test_a_family_rule_leaves_other_families_alone_and_a_second_run_changes_nothing() -> None:
    jax, cuda = _label("cuda-out-of-memory", family="jax-tf"), _label("cuda-out-of-memory", family="cuda")
    assert field_equivalents.apply([jax, cuda]) == 1
    assert jax["also_acceptable"] == ["jax-xla-out-of-memory"] and cuda["also_acceptable"] == []
    assert field_equivalents.apply([jax, cuda]) == 0
