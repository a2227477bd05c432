"""Contributor tools: `kb new`, `kb fmt` and the generated field reference."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT, run_kb
from generator.cli.commands import build_parser
from generator.corpus.fieldref import START, reference
from generator.corpus.model import field_paths

FILLED = {
    "title": '"CUDA error: the launch timed out and was terminated (display watchdog)"',
    "summary": "|\n  A kernel ran longer than the display watchdog allows on a GPU that also drives a screen, so the\n  driver killed it. Move the job to a GPU without a display or shorten each kernel.\n",
}


def _fill(text: str) -> str:
    """Replace every TODO value of the template the way a contributor would."""
    text = text.replace('title: "TODO: the canonical error text readers search for, then a few words of meaning"',
                        f"title: {FILLED['title']}")
    text = re.sub(r"summary: \|\n(  .*\n)+", "summary: " + FILLED["summary"], text)
    text = re.sub(r"root_cause: \|\n(  .*\n)+", "root_cause: |\n  The operating system's display watchdog limits how long one kernel may keep the GPU busy.\n", text)
    text = re.sub(r"mechanism: \|\n(  .*\n)+", "", text)
    replacements = {
        '"TODO: what the reader sees"': '"cudaErrorLaunchTimeout after a long-running kernel"',
        '"TODO: why this failure produces it"': '"The watchdog stopped the kernel to keep the screen responsive."',
        '"TODO: how to check the diagnosis"': '"See whether the GPU drives a display."',
        '"TODO: the cheapest action that fixes it"': '"Run the job on a GPU with no display attached."',
        '"TODO: how to check the fix worked"': '"Run the job again and watch for the error."',
        '"TODO: how to stop it happening again"': '"Keep compute jobs off display GPUs."',
        '"TODO: which wording of the message this covers"': '"The CUDA runtime message."',
        "'TODO: a Python regular expression with the fixed words of the message'": "'the launch timed out and was terminated'",
        '"TODO: a real log line, copied verbatim"': '"RuntimeError: CUDA error: the launch timed out and was terminated"',
        "https://example.org/TODO-the-page-it-comes-from": "https://github.com/pytorch/pytorch/issues/4200",
        '"TODO: the primary document behind the facts"': '"CUDA Runtime API: error types"',
        "https://example.org/TODO-primary-source": "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
    }
    for old, new in replacements.items():
        text = text.replace(old, new)
    return text.replace('"TODO: the exact command"', '"nvidia-smi --query-gpu=index,display_active --format=csv"')


def test_new_entry_template_fails_until_filled_then_validates(tmp_path: Path) -> None:
    result = run_kb("new", "cuda-launch-timeout", "--category", "cuda", "--root", "entries", cwd=tmp_path)
    assert result.code == 0, result.err
    path = tmp_path / "entries" / "cuda" / "cuda-launch-timeout.yaml"
    assert run_kb("fmt", "--check", "entries", cwd=tmp_path).code == 0, "the template is in canonical layout"
    assert path.read_text().startswith("# yaml-language-server: $schema=../../schema/entry.schema.json\n")
    unfilled = run_kb("validate", "entries", cwd=tmp_path)
    assert unfilled.code == 1 and "KB060" in unfilled.out and "Traceback" not in unfilled.err
    path.write_text(_fill(path.read_text()))
    filled = run_kb("validate", "entries", cwd=tmp_path)
    assert filled.code == 0, filled.out + filled.err


def test_new_refuses_existing_invalid_and_unknown(tmp_path: Path) -> None:
    assert run_kb("new", "xid-79", "--category", "xid", "--root", str(ROOT / "kb" / "entries")).err.count("already exists") == 1
    bad = run_kb("new", "Bad_Id", "--category", "cuda", "--root", str(tmp_path))
    assert bad.code == 2 and "not a valid id" in bad.err
    unknown = run_kb("new", "some-failure", "--category", "gpus", "--root", str(tmp_path))
    assert unknown.code == 2 and "unknown category 'gpus'" in unknown.err
    assert not list(tmp_path.rglob("*.yaml"))


def test_fmt_reorders_keeps_comments_and_checks(tmp_path: Path) -> None:
    source = (ROOT / "tests" / "golden" / "validate" / "clean" / "entries" / "cuda" / "demo-failure.yaml").read_text()
    shuffled = "# a comment that must survive\n" + source.replace("severity: high\n", "").replace(
        "references:", "severity: high  # trailing comment\nreferences:")
    path = tmp_path / "demo-failure.yaml"
    path.write_text(shuffled)
    check = run_kb("fmt", "--check", str(path))
    assert check.code == 1 and "not in canonical layout" in check.out
    assert path.read_text() == shuffled, "--check never writes"
    assert run_kb("fmt", str(path)).code == 0
    text = path.read_text()
    assert text.startswith("# a comment that must survive\n") and "severity: high  # trailing comment" in text
    assert text.index("severity:") < text.index("summary:")
    assert run_kb("fmt", "--check", str(path)).code == 0
    assert run_kb("validate", str(path.parent)).code == 0


def test_fmt_reports_bad_yaml_without_touching_it(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("id: x\ntitle: [unclosed\n")
    result = run_kb("fmt", str(path))
    assert result.code == 1 and "YAML problem" in result.err and path.read_text() == "id: x\ntitle: [unclosed\n"


def test_the_corpus_is_in_canonical_layout() -> None:
    result = run_kb("fmt", "--check", cwd=ROOT)
    assert result.code == 0, result.out + result.err


def test_field_reference_is_current_and_documents_every_field() -> None:
    guide = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    assert reference() in guide, "run 'kb docs'"
    block = guide.split(START, 1)[1]
    for path in field_paths():
        assert f"| `{path}` |" in block, f"field {path} is not documented"


def test_every_command_is_in_the_contributor_guide() -> None:
    guide = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for command in sub.choices:
        assert f"`kb {command}" in guide, command


def test_fmt_refuses_an_alias_bomb_at_once(tmp_path) -> None:
    """kb fmt compares the data before and after; with aliases expanded that took hours."""
    from conftest import run_kb
    from generator.corpus.regex_budget import budget

    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    path = tmp_path / "demo-failure.yaml"
    path.write_text("id: demo-failure\n" + "\n".join(lines) + "\n", encoding="utf-8")
    with budget(10):
        result = run_kb("fmt", "--check", str(path))
    assert result.code == 1 and "anchor (&name) that is used again through an alias" in result.out + result.err
    assert "Traceback" not in result.out + result.err
