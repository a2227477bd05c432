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


def test_text_with_thousands_of_open_brackets_is_refused_before_markdown_renders_it(tmp_path: Path) -> None:
    """Red team s24: 3,000 lines of "[a" (12 KB) in a summary took 21 s to validate (Python-Markdown
    looks for each link's end from every '['; cubic), and 150,000 of them (750 KB) never ended."""
    import time

    one = BASE.read_text().replace("  A short answer", "  " + "[a\n  " * 150_000 + "A short answer", 1)
    started = time.monotonic()
    problems = _check(tmp_path, one)
    assert time.monotonic() - started < 10
    assert [(p.code, p.message) for p in problems] == [
        ("KB040", "summary holds 150,000 '[' (at most 200 in one text); it was not checked further")]
    spread = BASE.read_text().replace("  A short answer", "  " + "[a " * 190 + "A short answer", 1).replace(
        "  The underlying fault", "  " + "[b " * 190 + "The underlying fault", 1)
    from generator.corpus.checks import SafeMarkup

    SafeMarkup.MAX_ENTRY_BRACKETS, saved = 300, SafeMarkup.MAX_ENTRY_BRACKETS
    try:
        problems = _check(tmp_path, spread)
    finally:
        SafeMarkup.MAX_ENTRY_BRACKETS = saved
    assert [p.message for p in problems] == [
        "root_cause and the texts after it were not checked further: the entry's texts hold over 300 '[' together"]
