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


def test_new_refuses_an_id_validation_would_refuse_and_shows_it_inert(tmp_path: Path) -> None:
    """Red team s24: an id of 81 characters was written as a template that kb validate then refused,
    and an id holding ESC was echoed raw to the terminal."""
    from generator.corpus.model import ID_MAX_LENGTH

    long = run_kb("new", "a" * (ID_MAX_LENGTH + 1), "--category", "cuda", "--root", str(tmp_path))
    assert long.code == 2 and f"at most {ID_MAX_LENGTH}" in long.err
    escaped = run_kb("new", "a\x1b[2J", "--category", "cuda", "--root", str(tmp_path))
    assert escaped.code == 2 and "\x1b" not in escaped.err and "\\x1b[2J" in escaped.err
    assert not list(tmp_path.rglob("*.yaml"))
    assert run_kb("new", "a" * ID_MAX_LENGTH, "--category", "cuda", "--root", str(tmp_path)).code == 0


def test_fmt_shows_a_file_name_with_terminal_controls_inert(tmp_path: Path) -> None:
    """Red team s24: a file named with ESC or BEL reached the terminal raw through kb fmt."""
    (tmp_path / "c\x1b]0;owned\x07.yaml").write_text("title: x\ntitle: y\n", encoding="utf-8")
    result = run_kb("fmt", str(tmp_path))
    assert result.code == 1 and "\x1b" not in result.err + result.out and "\x07" not in result.err + result.out
    assert "c\\x1b]0;owned\\x07.yaml:2: not formatted: YAML problem at line 2 (KB002 duplicate key 'title'" in result.err


def test_fmt_drops_a_byte_order_mark_and_keeps_the_entry(tmp_path: Path) -> None:
    """Red team s24 (O6): an entry saved with a UTF-8 byte-order mark was refused as 'the canonical
    form would change content (please report this file)'. The canonical form is UTF-8 without it."""
    source = (ROOT / "kb" / "entries" / "cuda" / "cuda-invalid-value.yaml").read_text(encoding="utf-8")
    assert source.startswith("# yaml-language-server"), "an entry whose first line is a comment, as every entry's is"
    path = tmp_path / "cuda-invalid-value.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + source.encode("utf-8"))
    check = run_kb("fmt", "--check", str(path))
    assert check.code == 1 and "not in canonical layout" in check.out, check.out + check.err
    assert run_kb("fmt", str(path)).code == 0
    assert path.read_bytes() == source.encode("utf-8")


def test_fmt_says_where_a_file_is_not_utf8(tmp_path: Path) -> None:
    """Red team s24 (O5): a Latin-1 byte gave the codec's message without a line or column."""
    path = tmp_path / "demo-failure.yaml"
    original = b"id: demo-failure\ntitle: caf\xe9 crash\n"
    path.write_bytes(original)
    result = run_kb("fmt", str(path))
    assert result.code == 1 and "not UTF-8 text at line 2, column 11 (byte 0xe9)" in result.err, result.err
    assert "codec" not in result.err and path.read_bytes() == original


# --- red team redcli29: kb fmt, kb new and kb docs on hostile files ----------------------------------

CLEAN_ENTRY = ROOT / "tests" / "golden" / "validate" / "clean" / "entries" / "cuda" / "demo-failure.yaml"


def _not_canonical() -> str:
    """The clean demo entry with `severity` moved after `references`: fmt rewrites it."""
    return CLEAN_ENTRY.read_text().replace("severity: high\n", "") + "severity: high  # moved\n"


def test_fmt_refuses_a_comment_it_would_drop_from_a_multiline_flow_list(tmp_path: Path) -> None:
    """redcli29 #1: comments after items of a [...] list written over several lines were dropped,
    and the file was reported as reformatted."""
    text = _not_canonical() + "tags: [\n  alpha,   # why alpha: keep me\n  beta,    # why beta: keep me too\n]\n"
    path = tmp_path / "demo-failure.yaml"
    path.write_text(text)
    line = text.splitlines().index("  alpha,   # why alpha: keep me") + 1
    for args in (("fmt", "--check", str(path)), ("fmt", str(path))):
        result = run_kb(*args)
        assert result.code == 1, result.err
        assert f"{path}:{line}: not formatted: kb fmt cannot keep this comment" in result.err, result.err
        assert "move it onto a line of its own above the key" in result.err
        assert "1 not formatted" in result.err and "reformatted" not in result.out
    assert path.read_text() == text, "a refused file is left as it was"


def test_fmt_keeps_a_whole_line_comment_inside_a_flow_list_and_every_value(tmp_path: Path) -> None:
    """What fmt can keep it keeps: a comment on its own line inside a flow list moves into the
    block list, and a folded `>-` block keeps its words (the canonical `|` block adds only the
    final newline every prose block ends with)."""
    import yaml

    text = _not_canonical().replace(
        "root_cause: |\n", "root_cause: >-\n") + "aliases: [x,\n  # standalone comment inside flow\n  y]\n"
    path = tmp_path / "demo-failure.yaml"
    path.write_text(text)
    before = yaml.safe_load(text)
    result = run_kb("fmt", str(path))
    assert result.code == 0, result.err
    after_text = path.read_text()
    after = yaml.safe_load(after_text)
    assert "# standalone comment inside flow" in after_text and "# moved" in after_text
    assert after["aliases"] == ["x", "y"]
    assert after["root_cause"].rstrip("\n") == before["root_cause"] and after["root_cause"].endswith("\n")
    assert {k: v for k, v in after.items() if k != "root_cause"} == {k: v for k, v in before.items() if k != "root_cause"}


def test_fmt_write_failure_leaves_the_entry_whole(tmp_path: Path) -> None:
    """redcli29 #2: fmt truncated the entry and wrote it in place; a full disk (here a file-size
    limit) left 8 KB of 30 KB and a traceback."""
    import resource
    import signal
    import subprocess
    import sys

    text = _not_canonical() + "# " + "x" * 20000 + "\n"
    path = tmp_path / "entries" / "cuda" / "demo-failure.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text)

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    proc = subprocess.run([sys.executable, "-m", "generator", "fmt", str(path)], cwd=ROOT, capture_output=True,
                          text=True, preexec_fn=limit, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{path}: cannot write: File too large; the file is unchanged" in proc.stderr
    assert path.read_text() == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["demo-failure.yaml"], "no temporary file left behind"


def test_fmt_writes_through_a_symlink_and_keeps_hard_links_and_mode(tmp_path: Path) -> None:
    import os

    text = _not_canonical()
    real = tmp_path / "real.yaml"
    real.write_text(text)
    folder = tmp_path / "entries"
    folder.mkdir()
    (folder / "demo-failure.yaml").symlink_to(real)
    other = tmp_path / "other.yaml"
    other.write_text(text)
    os.link(other, folder / "demo-two.yaml")
    os.chmod(other, 0o600)
    result = run_kb("fmt", str(folder))
    assert result.code == 0, result.err
    assert (folder / "demo-failure.yaml").is_symlink() and real.read_text() != text
    assert os.stat(other).st_nlink == 2 and other.read_text() == real.read_text()
    assert os.stat(other).st_mode & 0o777 == 0o600


def test_fmt_refuses_what_is_no_entry_file_without_blocking(tmp_path: Path) -> None:
    """redcli29 #4 and #16: fmt blocked on a FIFO, read a link to /dev/zero until memory ran out,
    read 50 MB files (validate refuses over 1,000,000 bytes) and skipped a device named directly."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "entries" / "cuda"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "p.yaml")
    (folder / "z.yaml").symlink_to("/dev/zero")
    (folder / "big.yaml").write_text("id: big\n# " + "x" * 1_100_000 + "\n")
    proc = subprocess.run([sys.executable, "-m", "generator", "fmt", "--check", str(tmp_path / "entries")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{folder / 'p.yaml'}: not formatted: is not a regular file (a FIFO)" in proc.stderr
    assert f"{folder / 'z.yaml'}: not formatted: is not a regular file (a character device)" in proc.stderr
    assert f"{folder / 'big.yaml'}: not formatted: file is 1,100,011 bytes; an entry is at most 1,000,000" in proc.stderr
    assert "3 not formatted" in proc.stderr
    for target, words in (("/dev/zero", "is neither a folder nor an entry file"),
                          (str(tmp_path / "missing.yaml"), "missing.yaml: no such file;")):
        result = run_kb("fmt", "--check", target)
        assert result.code == 2 and words in result.err and len(result.err.splitlines()) == 1, result.err


def test_new_refuses_a_root_that_is_no_writable_folder(tmp_path: Path, monkeypatch) -> None:
    """redcli29 #10: --root a file gave NotADirectoryError; an unwritable one a PermissionError traceback."""
    import errno

    from generator import atomic

    a_file = tmp_path / "file"
    a_file.write_text("")
    result = run_kb("new", "some-failure", "--category", "cuda", "--root", str(a_file))
    assert result.code == 2 and f"{a_file}: --root is not a folder" in result.err and len(result.err.splitlines()) == 1

    def full(path, text):  # noqa: ANN001, ANN202
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(atomic, "replace_text", full)
    result = run_kb("new", "some-failure", "--category", "cuda", "--root", str(tmp_path / "entries"))
    assert result.code == 2 and "Traceback" not in result.err and len(result.err.splitlines()) == 1, result.err
    assert "some-failure.yaml: cannot write the new entry: No space left on device" in result.err
    assert "check that --root names a folder you can write to" in result.err
    assert not list(tmp_path.rglob("*.yaml"))


def test_docs_refuses_a_guide_it_cannot_use_in_one_line(tmp_path: Path) -> None:
    """redcli29 #10: markers in the wrong order gave an IndexError, /dev/zero a MemoryError, a
    non-UTF-8 guide the codec's message without the path."""
    from generator.corpus.fieldref import END

    reversed_ = tmp_path / "rev.md"
    reversed_.write_text(f"intro\n{END}\n{START}\n")
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\n")
    for guide, words in ((reversed_, f"{reversed_}:3: no field-reference end marker after the start marker"),
                         (Path("/dev/zero"), "/dev/zero: is not a regular file (a character device); pass the Markdown guide"),
                         (bad, f"{bad}: not UTF-8 text (byte 0xff at offset 0)")):
        for extra in ((), ("--check",)):
            result = run_kb("docs", "--guide", str(guide), *extra)
            assert result.code == 2 and words in result.err and len(result.err.splitlines()) == 1, result.err
    assert reversed_.read_text() == f"intro\n{END}\n{START}\n"


# --- red team red31: kb new and kb fmt ------------------------------------------------------------


def test_new_refuses_an_xid_id_with_a_leading_zero_as_validate_would(tmp_path: Path) -> None:
    """red31 #15: `kb new xid-079 --category xid` wrote a template that kb validate refused (KB014:
    the id must be 'xid-79'); in the real tree it stood beside xid-79.yaml, a second Xid 79 entry."""
    for entry_id, code in (("xid-079", 79), ("xid-00013", None), ("xid-007", 7)):
        result = run_kb("new", entry_id, "--category", "xid", "--root", str(tmp_path))
        assert result.code == 2 and "Traceback" not in result.err, result.err
        if code is not None:
            assert f"an entry for Xid {code} must have the id 'xid-{code}' (no leading zero)" in result.err, result.err
    assert not list(tmp_path.rglob("*.yaml"))
    assert run_kb("new", "xid-79", "--category", "xid", "--root", str(tmp_path)).code == 0


def test_fmt_never_writes_a_file_over_the_entry_size_limit(tmp_path: Path) -> None:
    """red31 #6: a 995 KB entry with a quoted `notes` value validated; fmt made the value a literal
    block (two more spaces a line) and wrote 1.24 MB, which kb validate and kb fmt then refused."""
    from generator.corpus.load import MAX_ENTRY_BYTES

    source = CLEAN_ENTRY.read_text()
    lines = (MAX_ENTRY_BYTES - 5000 - len(source)) // 4
    text = source.replace("owner: application\n", "owner: application\nnotes: \"" + "ab\\n" * lines + "\"\n", 1)
    assert MAX_ENTRY_BYTES - 5000 < len(text.encode()) < MAX_ENTRY_BYTES
    path = tmp_path / "entries" / "cuda" / "demo-failure.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert run_kb("validate", str(tmp_path / "entries")).code == 0
    for args in (("fmt", "--check", str(path)), ("fmt", str(path))):
        result = run_kb(*args)
        assert result.code == 1 and "Traceback" not in result.err, result.err
        assert re.search(r"demo-failure\.yaml: not formatted: the canonical form would be 1,2\d\d,\d\d\d bytes, over the "
                         r"1,000,000-byte limit on an entry; split the entry", result.err), result.err
        assert "1 not formatted" in result.err and "reformatted" not in result.out
    assert path.read_text() == text
    assert run_kb("validate", str(tmp_path / "entries")).code == 0


def _fmt_refusal(tmp_path: Path, text: str) -> str:
    """kb fmt's and kb fmt --check's message for ``text``, checking that the file stays byte-identical."""
    path = tmp_path / "demo-failure.yaml"
    path.write_text(text)
    said = []
    for args in (("fmt", "--check", str(path)), ("fmt", str(path))):
        result = run_kb(*args)
        assert result.code == 1 and "Traceback" not in result.err and "1 not formatted" in result.err, result.err
        said.append(result.err.splitlines()[0])
    assert said[0] == said[1] and path.read_text() == text
    return said[0]


def test_fmt_and_validate_agree_on_a_tab_between_tokens(tmp_path: Path) -> None:
    """red31 #12a: `owner:<TAB>application` validated (libyaml takes it), but kb fmt said 'YAML problem
    (while scanning for the next token)' with no line, and validate then found nothing."""
    text = CLEAN_ENTRY.read_text().replace("owner: application", "owner:\tapplication")
    said = _fmt_refusal(tmp_path, text)
    assert said.startswith(f"{tmp_path / 'demo-failure.yaml'}:5: not formatted: YAML problem at line 5 (KB001 a tab "
                           "after 'owner:' where YAML needs a space"), said
    result = run_kb("validate", str(tmp_path))
    assert result.code == 1 and "demo-failure.yaml:5:7: KB001 a tab after 'owner:' where YAML needs a space" in result.out
    assert "replace the tab with a space" in result.out
    fine = CLEAN_ENTRY.read_text().replace("ERROR something broke", "ERROR\tsomething broke")  # in quotes: text
    (tmp_path / "demo-failure.yaml").write_text(fine)
    assert run_kb("validate", str(tmp_path)).code == 0 and run_kb("fmt", str(tmp_path)).code == 0
    assert run_kb("validate", str(tmp_path)).code == 0


def test_fmt_calls_an_unhashable_key_a_yaml_error_at_its_line(tmp_path: Path) -> None:
    """red31 #12b: a `? [a, b]` key was 'the canonical form would change content (please report this
    file)', a bug report asked for a user's error; kb validate said KB001 at its line."""
    for key, kind in (("? [a, b]\n: x\n", "list"), ("{a: 1}: x\n", "mapping")):
        text = CLEAN_ENTRY.read_text() + key
        line = text.count("\n") - key.count("\n") + 1
        said = _fmt_refusal(tmp_path, text)
        assert f":{line}: not formatted: YAML problem at line {line} (KB001 YAML error: found unhashable key: this key " \
               f"is a {kind}" in said, said
        assert "please report" not in said
        result = run_kb("validate", str(tmp_path))
        assert f"demo-failure.yaml:{line}:" in result.out and f"this key is a {kind}" in result.out, result.out


def test_fmt_drops_document_markers_and_keeps_their_comments(tmp_path: Path) -> None:
    """red31 #12c: a `---` after the schema comment, or a `...` and a comment at the end, were refused
    as 'a comment inside a [...] list or after a block indicator' at line 1: neither was there."""
    source = (ROOT / "kb" / "entries" / "cuda" / "cuda-invalid-value.yaml").read_text(encoding="utf-8")
    first, rest = source.split("\n", 1)
    path = tmp_path / "cuda-invalid-value.yaml"
    for text, expected in ((f"{first}\n---\n{rest}", source),
                           (f"{first}\n--- # the one document\n{rest}", f"{first}\n# the one document\n{rest}"),
                           (f"{source}...\n# after the end\n", f"{source}# after the end\n"),
                           (f"---\n{source}...\n", source)):
        path.write_text(text)
        result = run_kb("fmt", str(path))
        assert result.code == 0 and "1 file" in result.err, result.err
        assert path.read_text() == expected
        assert run_kb("fmt", "--check", str(path)).code == 0


def test_fmt_says_a_comment_between_a_key_and_its_value_is_there(tmp_path: Path) -> None:
    """red31 #12d: `severity:` / `  # why` / `  high` got the text about [...] lists and block indicators."""
    text = CLEAN_ENTRY.read_text().replace("severity: high\n", "severity:\n  # why high\n  high\n")
    said = _fmt_refusal(tmp_path, text)
    assert said == (f"{tmp_path / 'demo-failure.yaml'}:5: not formatted: kb fmt cannot keep this comment between a key "
                    "and its value; move it onto a line of its own above the key, then run kb fmt again"), said


def test_fmt_keeps_a_quoted_value_that_a_literal_block_cannot_hold(tmp_path: Path) -> None:
    """red31 #12e: `root_cause: "a\\r\\nb"` validated, but fmt said 'the canonical form would change
    content (please report this file)': the literal block it chose would hold a raw CR, read back as
    a line break. A value holding a character no block can hold keeps its quotes."""
    import yaml

    for value in ('"The fault\\r\\nover two lines"', '"bell \\a here\\n"', '"a line\\u2028separator"'):
        text = _not_canonical().replace("root_cause: |\n  The underlying fault, in one paragraph.\n",
                                        f"root_cause: {value}\n")
        assert f"root_cause: {value}" in text
        path = tmp_path / "demo-failure.yaml"
        path.write_text(text)
        result = run_kb("fmt", str(path))
        assert result.code == 0, result.err
        after = path.read_text()
        assert 'root_cause: "' in after and yaml.safe_load(after) == yaml.safe_load(text)
        assert run_kb("fmt", "--check", str(path)).code == 0


def test_fmt_names_the_field_whose_content_the_canonical_form_would_change(tmp_path: Path, monkeypatch) -> None:
    """The last guard, for what no case above covers: the field is named, the file kept."""
    from generator.corpus import fmt

    text = _not_canonical()
    path = tmp_path / "demo-failure.yaml"
    path.write_text(text)
    real = fmt.canonical
    monkeypatch.setattr(fmt, "canonical", lambda t: real(t).replace("step 12", "step 13"))
    result = fmt.format_file(path, check=False)
    assert not result.changed and path.read_text() == text
    assert result.error == ("not formatted: the canonical form would change signatures[0].examples[0].line "
                            "(please report this file)")
