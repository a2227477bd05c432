"""The kb command line: help with examples, every command documented, clean errors."""

from __future__ import annotations

import pytest

from conftest import ROOT, run_kb
from generator.cli.commands import build_parser


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sorted(sub.choices)


@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help_with_an_example(command: str) -> None:
    result = run_kb(command, "--help")
    assert result.code == 0
    assert f"Example: kb {command}" in result.out


@pytest.mark.parametrize("command", _commands())
def test_every_command_is_documented_in_the_readme(command: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`kb {command}" in readme


def test_unknown_command_is_a_usage_error() -> None:
    result = run_kb("frobnicate")
    assert result.code == 2 and "invalid choice" in result.err and "Traceback" not in result.err


def test_no_command_prints_help_and_exits_2() -> None:
    result = run_kb()
    assert result.code == 2 and "validate" in result.out


def test_schema_check_detects_a_stale_file(tmp_path) -> None:
    stale = tmp_path / "schema.json"
    stale.write_text("{}\n")
    result = run_kb("schema", "--check", "--output", str(stale))
    assert result.code == 1 and "out of date" in result.err
    assert run_kb("schema", "--output", str(stale)).code == 0
    assert run_kb("schema", "--check", "--output", str(stale)).code == 0


def test_github_annotations_when_running_in_actions(monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    folder = ROOT / "tests" / "golden" / "validate" / "regex-invalid"
    result = run_kb("validate", "entries", cwd=folder)
    assert result.code == 1
    assert result.out.startswith("::error file=entries/cuda/demo-failure.yaml,line=12,col=14,title=KB020 regex-invalid::")
