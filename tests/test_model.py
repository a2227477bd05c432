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
