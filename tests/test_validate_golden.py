"""Golden-file tests: `kb validate` prints exactly the expected problems for each defect.

Each folder under tests/golden/validate/ holds an `entries/` tree seeded with one defect and
`expected.txt`, the exact output (stdout, then stderr, then the exit code). To refresh after
an intended wording change: KB_UPDATE_GOLDEN=1 pytest tests/test_validate_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import run_kb

GOLDEN = Path(__file__).parent / "golden" / "validate"
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", CASES)
def test_validate_output_matches_golden(case: str) -> None:
    folder = GOLDEN / case
    result = run_kb("validate", "entries", cwd=folder)
    actual = f"{result.out}{result.err}exit {result.code}\n"
    expected_file = folder / "expected.txt"
    if os.environ.get("KB_UPDATE_GOLDEN"):
        expected_file.write_text(actual, encoding="utf-8")
    assert actual == expected_file.read_text(encoding="utf-8")


def test_every_problem_code_has_a_golden_case() -> None:
    from generator.errors import CODES

    seen = set()
    for case in CASES:
        text = (GOLDEN / case / "expected.txt").read_text(encoding="utf-8")
        seen.update(code for code in CODES if f" {code} " in text)
    # KB015 (duplicate signature id) is covered in test_checks.py
    missing = set(CODES) - seen - {"KB015"}
    assert not missing, f"codes without a golden case: {sorted(missing)}"
