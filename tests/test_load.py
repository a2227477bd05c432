"""Loading entry files: positions of problems inside the YAML, odd files, no tracebacks."""

from __future__ import annotations

from pathlib import Path

from generator.load import load_file

BASE = Path(__file__).parent / "golden" / "validate" / "clean" / "entries" / "cuda" / "demo-failure.yaml"


def _write(tmp_path: Path, text: str | bytes, name: str = "demo-failure.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_clean_file_loads(tmp_path: Path) -> None:
    loaded, problems = load_file(_write(tmp_path, BASE.read_text()))
    assert problems == [] and loaded.entry is not None and loaded.entry.id == "demo-failure"


def test_nested_type_error_points_at_the_value(tmp_path: Path) -> None:
    text = BASE.read_text().replace("        source: https://example.org/issues/1", "        source: [1, 2]")
    _, problems = load_file(_write(tmp_path, text))
    assert [(p.code, p.line, p.col) for p in problems] == [("KB004", 15, 17)]
    assert "signatures[0].examples[0].source must be text" in problems[0].message


def test_unsafe_html_in_block_scalar_points_at_the_exact_line_and_column(tmp_path: Path) -> None:
    from generator.checks import run_checks

    text = BASE.read_text().replace("  A short answer that says", "  A short <b>answer</b> that says")
    loaded, problems = load_file(_write(tmp_path, text))
    assert problems == []
    found = run_checks([loaded])
    assert [(p.code, p.line, p.col) for p in found] == [("KB040", 7, 11)]


def test_empty_file_is_reported_not_raised(tmp_path: Path) -> None:
    _, problems = load_file(_write(tmp_path, ""))
    assert [p.code for p in problems] == ["KB004"]


def test_binary_file_is_reported(tmp_path: Path) -> None:
    _, problems = load_file(_write(tmp_path, b"\x00\x01\x02binary"))
    assert [p.code for p in problems] == ["KB001"] and "NUL" in problems[0].message


def test_control_character_is_reported_with_position(tmp_path: Path) -> None:
    _, problems = load_file(_write(tmp_path, "id: demo\ntitle: a\x07b\n"))
    assert [(p.code, p.line) for p in problems] == [("KB001", 2)]


def test_dates_stay_text(tmp_path: Path) -> None:
    text = BASE.read_text().replace('title: "Example failure: something broke"', "title: 2024-01-01")
    loaded, problems = load_file(_write(tmp_path, text))
    assert problems == [] and loaded.entry is not None and loaded.entry.title == "2024-01-01"


def test_boolean_looking_value_in_text_field_is_a_type_error(tmp_path: Path) -> None:
    text = BASE.read_text().replace("severity: high\n", "severity: high\ntags: [no, pcie]\n")
    _, problems = load_file(_write(tmp_path, text))
    assert [(p.code, p.line) for p in problems] == [("KB004", 5)]
    assert "the boolean false" in problems[0].message
