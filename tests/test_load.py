"""Loading entry files: positions of problems inside the YAML, odd files, no tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator.corpus import load
from generator.corpus.load import load_file

ROOT = Path(__file__).resolve().parents[1]

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
    from generator.corpus.checks import run_checks

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


# --- the direct constructor gives exactly what PyYAML's safe constructor gives ------------------

_YAML_SHAPES = [
    "a: 1\nb: [x, 2.5, null, true, ~, '', 2024-01-01, 0x1f, 1_000]\nc: !!binary aGVsbG8=\n",
    "x: &a [1, {k: v}]\ny: *a\n",
    "base: &r {b: 1}\nchild:\n  <<: *r\n  c: 2\n",
    "1: integer key\nnull: null key\n",
    "text: |\n  two\n  lines\nfolded: >\n  one\n  line\n",
    "empty:\nlist: []\nmap: {}\n",
]


@pytest.mark.parametrize("text", _YAML_SHAPES)
def test_direct_construction_equals_the_safe_constructor(text: str) -> None:
    loader = load.EntryLoader(text)
    node = loader.get_single_node()
    fast = load.construct(loader, node)
    loader.dispose()
    assert fast == yaml.load(text, Loader=load.EntryLoader)


@pytest.mark.parametrize("text", ["? [a]\n: 1\n", "a: !foo 1\n", "a: &x [*x]\n"])
def test_unusual_yaml_falls_back_to_the_safe_constructor(text: str) -> None:
    loader = load.EntryLoader(text)
    node = loader.get_single_node()
    try:
        expected = yaml.load(text, Loader=load.EntryLoader)
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)):
            load.construct(loader, node)
    else:  # a recursive alias: PyYAML builds the self-containing list, so must we
        got = load.construct(loader, node)
        assert got["a"][0] is got["a"] and expected["a"][0] is expected["a"]


class _Reference(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader with dates kept as text: the behaviour to equal."""


_Reference.yaml_implicit_resolvers = load.EntryLoader.yaml_implicit_resolvers


@pytest.mark.parametrize("text", _YAML_SHAPES)
def test_resolver_and_constructor_equal_the_pure_python_loader(text: str) -> None:
    assert yaml.load(text, Loader=load.EntryLoader) == yaml.load(text, Loader=_Reference)


def test_direct_construction_of_the_whole_corpus() -> None:
    for path in sorted((ROOT / "kb" / "entries").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        loader = load.EntryLoader(text)
        node = loader.get_single_node()
        assert load.construct(loader, node) == yaml.load(text, Loader=_Reference), path
        loader.dispose()


def test_values_nested_too_deeply_are_refused_before_construction(tmp_path) -> None:
    """Found by fuzzing: 300 levels of block lists overflowed the recursive constructor."""
    from generator.corpus.load import MAX_NESTING, load_file

    path = tmp_path / "deep.yaml"
    path.write_text("id: deep\nx:\n" + "".join("  " * i + "- \n" for i in range(300)), encoding="utf-8")
    loaded, problems = load_file(path)
    assert loaded.entry is None
    assert [p.code for p in problems] == ["KB001"]
    assert f"nested more than {MAX_NESTING} levels deep" in problems[0].message


def test_a_small_file_of_many_values_is_refused_before_the_model_sees_it(tmp_path) -> None:
    """Red team s24: a 1 MB list of `1,` (500,000 values) took 650 MB once each value failed the model."""
    from generator.corpus.load import MAX_VALUES, load_file

    text = BASE.read_text() + "tags: [" + "1," * (MAX_VALUES + 10) + "]\n"
    assert len(text) < load.MAX_ENTRY_BYTES
    loaded, problems = load_file(_write(tmp_path, text))
    assert loaded.entry is None and [p.code for p in problems] == ["KB001"]
    assert f"more than {MAX_VALUES:,} values" in problems[0].message and problems[0].hint


def test_thousands_of_model_errors_are_listed_up_to_a_bound_and_counted(tmp_path) -> None:
    """Red team s24: 50,000 unknown keys (500 KB) cost a 'did you mean' search and a walk of the
    mapping per key: validation ran for minutes. The first ones are listed, the rest counted."""
    import time

    from generator.corpus.load import MAX_MODEL_PROBLEMS, load_file

    extra = 20_000
    text = BASE.read_text() + "".join(f"k{i}: v\n" for i in range(extra))
    started = time.monotonic()
    _, problems = load_file(_write(tmp_path, text))
    assert time.monotonic() - started < 5
    unknown = [p for p in problems if p.code == "KB003"]
    assert len(unknown) == MAX_MODEL_PROBLEMS and unknown[0].message == "unknown field 'k0'"
    summary = [p for p in problems if "not listed" in p.message]
    assert len(summary) == 1 and f"{extra - MAX_MODEL_PROBLEMS:,} more problems" in summary[0].message
    assert summary[0].line == BASE.read_text().count("\n") + MAX_MODEL_PROBLEMS + 1  # at the first key not listed


@pytest.mark.parametrize("raw, message, hint", [
    ("utf-16", "file is UTF-16 text; entries are UTF-8", "save the file as UTF-8"),
    ("nul", "file contains NUL bytes", "remove the NUL bytes"),
])
def test_a_file_in_another_encoding_says_which_and_how_to_save_it(tmp_path, raw: str, message: str, hint: str) -> None:
    text = BASE.read_text()
    data = text.encode("utf-16") if raw == "utf-16" else text.replace("title:", "title:\0", 1).encode()
    _, problems = load_file(_write(tmp_path, data))
    assert [p.code for p in problems] == ["KB001"]
    assert message in problems[0].message and problems[0].hint.startswith(hint)
    if raw == "nul":
        line = text[: text.index("title:")].count("\n") + 1
        assert (problems[0].line, problems[0].col) == (line, len("title:") + 1)


# --- red team redcli29 ---------------------------------------------------------------------------


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """redcli29 #5: a 1 GiB sparse file was read whole (1 GB of memory) before the size check."""
    import tracemalloc

    path = tmp_path / "demo-failure.yaml"
    with open(path, "wb") as fh:
        fh.truncate(256 * 1024 * 1024)
    tracemalloc.start()
    try:
        _, problems = load_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [p.message for p in problems] == ["file is 268,435,456 bytes; an entry is at most 1,000,000"]
    assert peak < 8 * 1024 * 1024, peak


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path: Path, monkeypatch) -> None:
    import os

    path = _write(tmp_path, BASE.read_text())
    real_fstat = os.fstat
    with open(path, "ab") as fh:
        fh.write(b"# " + b"x" * load.MAX_ENTRY_BYTES + b"\n")

    def small(fd):  # noqa: ANN001, ANN202 - the stat, taken before the file grew, says small
        st = real_fstat(fd)
        return os.stat_result((*st[:6], 100, *st[7:]))

    monkeypatch.setattr(os, "fstat", small)
    loaded, problems = load_file(path)
    assert [p.message for p in problems] == ["file grew past 1,000,000 bytes while it was read; an entry is at most 1,000,000"]


def test_an_integer_too_long_to_convert_is_a_problem_at_its_position(tmp_path: Path) -> None:
    """redcli29 #7: 5,000 digits raised ValueError from the YAML constructor (a traceback in
    kb validate, kb rules and the last-good-rules fallback of kb diagnose)."""
    text = BASE.read_text() + "xid:\n  code: " + "9" * 5000 + "\n"
    line = text.count("\n", 0, text.index("  code: ")) + 1
    _, problems = load_file(_write(tmp_path, text))
    assert [(p.line, p.col, p.code) for p in problems] == [(line, 9, "KB004")]
    assert "a number of 5,000 digits" in problems[0].message


def test_a_lone_surrogate_in_a_pattern_is_kb020_and_stops_the_checks(tmp_path: Path) -> None:
    text = BASE.read_text().replace("pattern: 'something broke at step [0-9]+'", "pattern: 'something broke \\ud800'")
    assert "\\ud800" in text
    loaded, problems = load_file(_write(tmp_path, text))
    assert [(p.code, p.line) for p in problems] == [("KB020", 12)]
    assert "lone surrogate \\ud800" in problems[0].message and loaded.entry is None
    fine = BASE.read_text().replace("pattern: 'something broke at step [0-9]+'",
                                    "pattern: 'something broke at step [\\u0000-\\uffff]'")
    assert load_file(_write(tmp_path, fine))[1] == []  # a range that spans the surrogates is no lone one


def test_a_lone_surrogate_in_text_is_kb006() -> None:
    """libyaml refuses a "\\ud800" escape; the pure-Python reader (used without libyaml) takes it."""
    node = yaml.compose('title: "broke \\ud800"\n', Loader=yaml.SafeLoader)
    problems = list(load._walk_structure(node, "x.yaml"))
    assert [(p.code, p.line, p.col) for p in problems] == [("KB006", 1, 8)]
    assert "lone surrogate \\ud800" in problems[0].message


def test_an_empty_root_is_an_input_error(tmp_path: Path) -> None:
    from generator.errors import InputError

    with pytest.raises(InputError, match="no entry files"):
        load.load_corpus_files(tmp_path)


# --- session 30: line breaks only YAML sees ----------------------------------------------------


@pytest.mark.parametrize("char, name, fix", [("\u2028", "U+2028 (line separator) character", "space"),
                                             ("\u2029", "U+2029 (paragraph separator) character", "space"),
                                             ("\x85", "U+0085 (NEL, next line) character", "space"),
                                             ("\r", "CR (carriage return) not followed by LF", "LF")])
def test_a_line_break_only_yaml_sees_is_kb001_where_the_editor_shows_it(tmp_path: Path, char: str, name: str,
                                                                        fix: str) -> None:
    """YAML 1.1 reads NEL, U+2028, U+2029 and a CR alone as line breaks: in a quoted example line it
    was folded into a space and the entry validated (the line checked was not the line written); in
    a plain value it was a syntax error lines away from where any editor shows the character."""
    text = BASE.read_text().replace('"ERROR something broke', f'"ERROR é{char}something broke')
    loaded, problems = load_file(_write(tmp_path, text))
    assert loaded.entry is None
    assert [(p.code, p.line, p.col) for p in problems] == [("KB001", 14, 23)]
    assert problems[0].message == f"{name}: YAML reads it as a line break, which editors do not show as one"
    assert problems[0].hint and fix in problems[0].hint


def test_crlf_line_ends_are_no_hidden_break(tmp_path: Path) -> None:
    """CR LF is one line break to YAML and to every editor: a file saved on Windows validates."""
    loaded, problems = load_file(_write(tmp_path, BASE.read_text().replace("\n", "\r\n")))
    assert problems == [] and loaded.entry is not None


def test_fmt_refuses_a_line_break_only_yaml_sees_instead_of_folding_it_away(tmp_path: Path) -> None:
    from generator.corpus.fmt import format_file

    text = BASE.read_text().replace("severity: high\n", "severity: high\x85").replace("nothing broke", "nothing\x85broke")
    path = _write(tmp_path, text)
    result = format_file(path, check=False)
    assert not result.changed and path.read_text(encoding="utf-8") == text
    assert result.line == 4 and "YAML problem at line 4 (KB001 U+0085 (NEL, next line) character" in result.error
    assert "(1 more in this file)" in result.error


# --- red team red31 -------------------------------------------------------------------------------


@pytest.mark.parametrize("key, what", [("1", "a number"), ("null", "nothing (null)"), ("~", "nothing (null)"),
                                       ("true", "a boolean"), ("2.5", "a number")])
def test_a_key_that_is_no_text_is_reported_at_the_key(tmp_path: Path, key: str, what: str) -> None:
    """red31 #11: `1: x` at the end of an entry was `2:1: KB006 [1]: keys should be strings` with the
    hint 'use one of the allowed values'; `null: x` was `KB006 None: ...` at the same wrong place."""
    text = BASE.read_text() + f"{key}: x\n"
    loaded, problems = load_file(_write(tmp_path, text))
    line = text.count("\n")
    assert [(p.code, p.line, p.col) for p in problems] == [("KB004", line, 1)], problems
    assert problems[0].message == f"key {key} is not a field name; field names are text"
    assert f"YAML reads this key as {what}" in problems[0].format() and "allowed values" not in problems[0].format()
    assert loaded.entry is None


def test_a_key_that_is_no_text_in_a_nested_mapping_and_other_problems_are_all_reported(tmp_path: Path) -> None:
    text = BASE.read_text().replace("    examples:\n", "    3: y\n    examples:\n").replace("severity: high\n", "")
    _, problems = load_file(_write(tmp_path, text))
    assert sorted((p.code, p.line, p.col) for p in problems) == [("KB004", 12, 5), ("KB005", 1, 1)], problems
    assert "key 3 is not a field name" in next(p.message for p in problems if p.code == "KB004")


def test_fmt_refuses_a_key_that_is_no_text_instead_of_calling_it_canonical(tmp_path: Path) -> None:
    from generator.corpus.fmt import format_file

    text = BASE.read_text() + "1: x\n"
    path = _write(tmp_path, text)
    result = format_file(path, check=True)
    assert not result.changed and result.line == text.count("\n")
    assert result.error and "key 1 is not a field name" in result.error
    assert path.read_text() == text


def test_a_posix_class_is_kb020_and_no_warning_reaches_stderr(tmp_path: Path) -> None:
    """red31 #17: `[[:digit:]]` was reported as 'does not match its example' (re reads it as the
    characters ':digt'), and Python's FutureWarning 'Possible nested set' was printed on stderr."""
    import warnings

    for pattern, words in (("something broke at step [[:digit:]]+ of 31", "holds the POSIX class [:digit:], which Python's re "
                            "does not know (it reads the characters ':digit' instead)"),
                           ("something broke at step [0-9--]+ of 31", "possible set difference at position")):
        text = BASE.read_text().replace("pattern: 'something broke at step [0-9]+'", f"pattern: '{pattern}'")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded, problems = load_file(_write(tmp_path, text))
        assert not [w for w in caught if issubclass(w.category, FutureWarning)]
        assert [(p.code, p.line, p.col) for p in problems] == [("KB020", 12, 14)], problems
        assert words in problems[0].message and loaded.entry is None
        assert ("[0-9] for [:digit:]" if "POSIX" in words else "escape the character") in problems[0].format()


def test_an_entry_saved_as_yml_is_reported_not_skipped(tmp_path: Path) -> None:
    """red31 #17: `foo.yml` was neither checked nor built, and kb validate said '1 entry OK'."""
    folder = tmp_path / "cuda"
    folder.mkdir()
    (folder / "demo-failure.yaml").write_text(BASE.read_text())
    (folder / "other-failure.yml").write_text(BASE.read_text().replace("demo-failure", "other-failure"))
    files, problems = load.load_corpus_files(tmp_path)
    assert len(files) == 1
    assert [(p.path.endswith("cuda/other-failure.yml"), p.code, p.line) for p in problems] == [(True, "KB010", 1)]
    assert problems[0].format().endswith("KB010 entry files end in .yaml; this one is not read\n"
                                         "    hint: rename it to other-failure.yaml")
