"""Validator classes: each reports its own problem code at the right place."""

from __future__ import annotations

from pathlib import Path

from generator.corpus.checks import VALIDATORS, run_checks
from generator.corpus.load import load_file

BASE = Path(__file__).parent / "golden" / "validate" / "clean" / "entries" / "cuda" / "demo-failure.yaml"


def _check(tmp_path: Path, text: str) -> list:
    path = tmp_path / "demo-failure.yaml"
    path.write_text(text)
    loaded, problems = load_file(path)
    assert problems == []
    return run_checks([loaded])


def test_validators_have_ids_and_descriptions() -> None:
    for cls in VALIDATORS:
        assert cls.id.startswith("KB") and cls.description


def test_duplicate_signature_id(tmp_path: Path) -> None:
    text = BASE.read_text().replace("references:", """  - id: main
    pattern: 'other'
    examples:
      - line: "other"
        source: https://example.org/issues/2
references:""")
    found = _check(tmp_path, text)
    assert [(p.code, p.line) for p in found] == [("KB015", 18)]


def test_clean_entry_has_no_problems(tmp_path: Path) -> None:
    assert _check(tmp_path, BASE.read_text()) == []


def test_xid_block_on_non_xid_entry(tmp_path: Path) -> None:
    text = BASE.read_text().replace("references:", "xid:\n  code: 13\n  name: Graphics Engine Exception\nreferences:")
    found = _check(tmp_path, text)
    assert [p.code for p in found] == ["KB014"]
