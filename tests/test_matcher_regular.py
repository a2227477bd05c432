"""The one reader of files that must be regular ones: entry files, the contributor guide and
rules.json are read by it, bounded, without blocking, each path refused with what it is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.errors import InputError, RulesError
from generator.matcher import regular
from generator.matcher.regular import Unusable, read_regular


def _refused(path: Path, limit: int = 100) -> Unusable:
    with pytest.raises(Unusable) as caught:
        read_regular(path, limit)
    return caught.value


def test_a_regular_file_within_the_bound_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 100)
    assert read_regular(path, 100) == b"x" * 100
    assert read_regular(str(path), 100) == b"x" * 100


def test_a_fifo_is_refused_at_once_and_named(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    why = _refused(tmp_path / "pipe")
    assert (why.kind, why.detail, why.phrase) == (regular.SPECIAL, "a FIFO", "is not a regular file (a FIFO)")


def test_a_device_is_refused_without_being_opened(monkeypatch) -> None:
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *args: opened.append(path) or real_open(path, *args))
    why = _refused(Path("/dev/zero"))
    assert (why.kind, why.phrase) == (regular.SPECIAL, "is not a regular file (a character device)")
    assert opened == []


def test_a_folder_a_missing_path_and_links_to_nowhere_say_what_they_are(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dangling").symlink_to("gone.txt")
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")
    said = {name: (_refused(tmp_path / name).kind, _refused(tmp_path / name).phrase)
            for name in ("dir", "missing", "dangling", "loop-a")}
    assert said == {
        "dir": (regular.FOLDER, "is a folder"),
        "missing": (regular.MISSING, "does not exist"),
        "dangling": (regular.DANGLING, "is a symbolic link to 'gone.txt', which does not exist"),
        "loop-a": (regular.LOOP, "is a symbolic link loop"),
    }


def test_a_file_over_the_bound_is_refused_by_its_size_before_a_byte_is_read(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "big"
    with open(path, "wb") as fh:
        fh.truncate(1 << 30)
    monkeypatch.setattr(os, "read", lambda *args: pytest.fail("read a file its size refuses"))
    why = _refused(path, 1000)
    assert (why.kind, why.size, why.phrase) == (regular.TOO_BIG, 1 << 30, "is 1,073,741,824 bytes, more than 1,000")


def test_a_file_that_grows_past_the_bound_while_read_is_refused(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "growing"
    path.write_bytes(b"x" * 5000)
    real_fstat = os.fstat
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result((*real_fstat(fd)[:6], 10, *real_fstat(fd)[7:])))
    why = _refused(path, 1000)
    assert (why.kind, why.phrase) == (regular.GREW, "grew past 1,000 bytes while it was read")


def test_a_file_that_cannot_be_opened_gives_the_systems_reason(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "secret"
    path.write_text("x")

    def refuse(*args):  # noqa: ANN002, ANN202 - the tests may run as root: refuse it here
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", refuse)
    why = _refused(path)
    assert (why.kind, why.detail, why.phrase) == (regular.UNREADABLE, "Permission denied", "cannot be read: Permission denied")


def test_rules_json_that_is_no_regular_file_is_one_rules_error(tmp_path: Path) -> None:
    from generator.matcher.rules import load

    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "dangling.json").symlink_to("old.json")
    (tmp_path / "dir.json").mkdir()
    expected = {
        "fifo.json": "is not a regular file (a FIFO); give the path of a rules.json that 'kb rules' wrote",
        "dangling.json": "is a symbolic link to 'old.json', which does not exist; give the path of a rules.json",
        "dir.json": "is a folder, not a rules file; remove it and run 'kb rules'",
        "none.json": "no rules file; build it with 'kb rules'",
    }
    for name, words in expected.items():
        with pytest.raises(RulesError) as caught:
            load(tmp_path / name)
        assert str(caught.value).startswith(f"{tmp_path / name}: {words}"), caught.value


def test_a_guide_that_is_no_regular_file_is_one_input_error(tmp_path: Path) -> None:
    from generator.corpus.fieldref import update

    os.mkfifo(tmp_path / "guide.md")
    (tmp_path / "folder.md").mkdir()
    for name, words in (("guide.md", "is not a regular file (a FIFO); pass the Markdown guide with --guide"),
                        ("folder.md", "is a folder; pass the Markdown guide with --guide")):
        with pytest.raises(InputError) as caught:
            update(tmp_path / name, check=True)
        assert str(caught.value) == f"{tmp_path / name}: {words}"
