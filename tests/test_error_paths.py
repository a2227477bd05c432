"""Every way issue 11 found to get a traceback now ends in one line and a documented exit code.

Exit codes of `kb` (docs/diagnose.md and the README): 0 done, 1 problems found (validate,
eval), 2 an input, a rules file or an argument that cannot be used, 130 interrupted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, run_kb
from generator.matcher.rules import canonical

KB = [sys.executable, "-m", "generator"]
CLEAN = ROOT / "tests" / "golden" / "validate" / "clean" / "entries"


def _one_line_exit(proc: subprocess.CompletedProcess, code: int, *words: str) -> None:
    err = proc.stderr.strip()
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and len(err.splitlines()) == 1, proc.stderr
    for word in words:
        assert word in err, err


def test_diagnose_with_standard_input_closed() -> None:
    proc = subprocess.run(["bash", "-c", f"exec {sys.executable} -m generator diagnose - <&-"], cwd=ROOT,
                          capture_output=True, text=True)
    _one_line_exit(proc, 2, "standard input is closed")


def _valid_rules() -> dict:
    from generator.cli.diagnose import ensure_rules

    old = Path.cwd()
    os.chdir(ROOT)
    try:
        return json.loads(json.dumps(ensure_rules(None)))
    finally:
        os.chdir(old)


def _signed(doc: dict) -> str:
    import hashlib

    doc = {k: v for k, v in doc.items() if k != "hash"}
    doc["hash"] = "sha256:" + hashlib.sha256(canonical(doc).encode()).hexdigest()
    return json.dumps(doc)


def _tampered(kind: str) -> str:
    doc = _valid_rules()
    if kind == "missing-key":
        doc["signatures"][0].pop("pattern")
    elif kind == "bad-regex":
        doc["signatures"][0]["pattern"] = "([unclosed"
    elif kind == "backtracking":
        doc["signatures"][0]["pattern"] = "(a+)+$"
    elif kind == "deep-regex":
        doc["signatures"][0]["pattern"] = "(" * 3000 + "a" + ")" * 3000
    elif kind == "wrong-type":
        doc["entries"] = ["not", "an", "object"]
    elif kind == "bad-anchor":
        doc["anchors"][0]["signatures"] = [10 ** 6]
    elif kind == "bad-severity":  # red31 #7: --fail-on ended in "tuple.index(x): x not in tuple"
        doc["entries"]["xid-79"]["severity"] = "apocalyptic"
    elif kind == "bad-fix-step":  # the text report reads each step's text, command and rung
        doc["entries"]["xid-79"]["fix"] = [{"text": ["drain"], "command": None, "rung": None}]
    elif kind == "bad-cause":
        doc["entries"]["xid-79"]["causes"] = [79]
    return _signed(doc)


RULES_FILES = {
    "not-utf8": (b"\xff\xfe{}", "not UTF-8"),
    "deep-json": (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    "huge-integer": (b'{"format": ' + b"9" * 5000 + b"}", "integer"),
    "missing-key": (None, "'pattern' missing"),
    "bad-regex": (None, "does not compile"),
    "backtracking": (None, "unbounded repeat inside another"),
    "deep-regex": (None, "nested too deeply"),
    "wrong-type": (None, "'entries' must be an object"),
    "bad-anchor": (None, "names a signature that does not exist"),
    "bad-severity": (None, "entry 'xid-79': severity 'apocalyptic' is not one of info, low, medium, high, critical; "
                           "rebuild the rules with 'kb rules'"),
    "bad-fix-step": (None, "entry 'xid-79': fix step 0 must be an object with 'text'"),
    "bad-cause": (None, "entry 'xid-79': 'causes' must list entry ids"),
}


@pytest.mark.parametrize("case", sorted(RULES_FILES))
def test_a_hostile_rules_file_is_one_line(tmp_path: Path, case: str) -> None:
    content, words = RULES_FILES[case]
    rules = tmp_path / "rules.json"
    rules.write_bytes(content if content is not None else _tampered(case).encode())
    log = tmp_path / "x.log"
    log.write_text("[ 2.0] NVRM: Xid (PCI:0000:5e:00): 79, pid=123, GPU has fallen off the bus.\n")
    proc = subprocess.run([*KB, "diagnose", "--fail-on", "high", "--rules", str(rules), str(log)], cwd=ROOT,
                          capture_output=True, text=True)
    _one_line_exit(proc, 2, str(rules), words)


def test_the_rules_loader_knows_the_severities_of_the_entry_model() -> None:
    from generator.corpus.model import SEVERITIES
    from generator.matcher import rank, rules

    assert rules.SEVERITIES == SEVERITIES and set(rank.SEVERITY_WEIGHT) == set(SEVERITIES)


def test_a_folder_where_the_rules_file_should_be(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    shutil.copytree(CLEAN, tmp_path / "kb" / "entries")
    (tmp_path / "build" / "rules.json").mkdir(parents=True)
    (tmp_path / "x.log").write_text("hello\n")
    proc = subprocess.run([*KB, "diagnose", "x.log"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    _one_line_exit(proc, 2, "build/rules.json", "is a folder")


def test_entry_paths_that_are_not_files_are_errors_with_codes(tmp_path: Path, monkeypatch) -> None:
    entries = tmp_path / "entries" / "cuda"
    shutil.copytree(CLEAN / "cuda", entries)
    (entries / "loop-a.yaml").symlink_to("loop-b.yaml")
    (entries / "loop-b.yaml").symlink_to("loop-a.yaml")
    (entries / "dangling.yaml").symlink_to("missing.yaml")
    (entries / "folder.yaml").mkdir()
    os.mkfifo(entries / "fifo.yaml")
    unreadable = entries / "unreadable.yaml"
    unreadable.write_text("id: unreadable\n")
    real_open = os.open

    def open_(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202 - the tests may run as root: refuse it here
        if os.fspath(path).endswith("unreadable.yaml"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    result = run_kb("validate", "entries", cwd=tmp_path)
    assert result.code == 1 and "Traceback" not in result.err
    expected = {
        "dangling.yaml": "KB001 is a symbolic link to 'missing.yaml', which does not exist",
        "fifo.yaml": "KB001 is not a regular file (a FIFO)",
        "folder.yaml": "KB001 is a folder named like an entry file",
        "loop-a.yaml": "KB001 is a symbolic link loop",
        "unreadable.yaml": "KB001 cannot read the file: Permission denied",
    }
    for name, message in expected.items():
        assert f"entries/cuda/{name}:1:1: {message}" in result.out, result.out
    assert "check the file's permissions" in result.out  # no YAML-syntax hint for an unreadable file
    assert "kb validate: 6 problems in 6 files" in result.out + result.err


def test_a_second_build_waits_for_the_first_and_says_so(tmp_path: Path, capsys) -> None:
    from generator.site.build_lock import BuildLock
    from generator.errors import BuildError

    first = BuildLock(tmp_path)
    first.hold()
    second = BuildLock(tmp_path)
    with pytest.raises(BuildError, match="another build in this checkout has held"):
        second.hold(wait_s=0.5)
    assert "another build is running in this checkout (pid" in capsys.readouterr().err
    threading.Timer(0.3, first.release).start()
    started = time.monotonic()
    second.hold(wait_s=10)  # waits for the first, then goes on
    assert time.monotonic() - started >= 0.2
    second.release()


def test_two_builds_at_once_never_share_a_temporary_file(tmp_path: Path) -> None:
    from generator import atomic

    target = tmp_path / "page.md"
    target.write_text("old")
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(200):
                atomic.write_text(target, f"writer {n} round {i}\n" * 50)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and list(tmp_path.iterdir()) == [target]
    lines = set(target.read_text().splitlines())
    assert len(lines) == 1  # one writer's whole content, never a mix


def test_an_entry_cannot_drive_the_terminal_or_the_ci_log_through_a_problem(tmp_path: Path, monkeypatch) -> None:
    """Red team s24: a key written "\\e]0;...\\a\\e[2J" in YAML, or a file name holding ESC or a line
    break, reached the terminal raw through `kb validate` (clearing it, setting its title), and a
    line break in a file name started a workflow command of its own in a GitHub Actions log."""
    base = (ROOT / "tests" / "golden" / "validate" / "clean" / "entries" / "cuda" / "demo-failure.yaml").read_text()
    folder = tmp_path / "entries" / "cuda"
    folder.mkdir(parents=True)
    (folder / "demo-failure.yaml").write_text(base + '"\\e]0;owned\\a\\e[2J": v\n', encoding="utf-8")
    (folder / "odd\x1b[2J\nname.yaml").write_text(base, encoding="utf-8")
    result = run_kb("validate", str(tmp_path / "entries"))
    assert result.code == 1
    assert "\x1b" not in result.out and "\x07" not in result.out
    assert "unknown field '\\x1b]0;owned\\x07\\x1b[2J'" in result.out and "odd\\x1b[2J\\x0aname.yaml" in result.out
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = run_kb("validate", str(tmp_path / "entries"))
    commands = [line for line in result.out.splitlines() if line]
    assert all(line.startswith("::error file=") for line in commands), commands
    assert any("odd\\x1b[2J%0Aname.yaml" in line for line in commands)


# --- red team redcli29 -----------------------------------------------------------------------------


@pytest.mark.parametrize("output, words", [
    ("/dev/full", "/dev/full: is not a regular file (a device, FIFO or socket)"),
    ("FOLDER", "is a folder, not a rules file"),
])
def test_rules_output_that_is_no_file_is_one_line(tmp_path: Path, output: str, words: str) -> None:
    """redcli29 #10: `kb rules --output /dev/full` read the device (endless zeros) until memory ran out."""
    shutil.copytree(CLEAN, tmp_path / "kb" / "entries")
    (tmp_path / "FOLDER").mkdir()
    result = run_kb("rules", "--output", output if output.startswith("/") else str(tmp_path / output), cwd=tmp_path)
    assert result.code == 2 and words in result.err and len(result.err.splitlines()) == 1, result.err


def test_rules_that_cannot_be_written_leave_one_line_and_no_temporary(tmp_path: Path, monkeypatch) -> None:
    import errno

    from generator import atomic

    shutil.copytree(CLEAN, tmp_path / "kb" / "entries")

    def full(path, text):  # noqa: ANN001, ANN202
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(atomic, "write_text", full)
    result = run_kb("rules", "--output", str(tmp_path / "rules.json"), cwd=tmp_path)
    assert result.code == 2 and "rules.json: cannot write the rules: No space left on device" in result.err
    assert len(result.err.splitlines()) == 1 and not (tmp_path / "rules.json").exists()


def test_an_os_error_no_command_foresaw_is_one_line_with_the_path(tmp_path: Path) -> None:
    """redcli29 #10: `kb eval` on a folder whose labels.yaml is a folder gave IsADirectoryError; the
    entry point turns any such error into one line naming the path (exit 2)."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "001.log").write_text("hello\n")
    (tmp_path / "labels.yaml").mkdir()
    proc = subprocess.run([*KB, "eval", "--rules", str(_rules_file(tmp_path)), str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    _one_line_exit(proc, 2, "labels.yaml: Is a directory")


def _rules_file(tmp_path: Path) -> Path:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(_valid_rules()))
    return path
