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


# --- red team redcli29: output, encodings, Ctrl-C, file arguments ------------------------------------

import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

CLEAN = ROOT / "tests" / "golden" / "validate" / "clean" / "entries"


def _kb(*args: str, env: dict | None = None, stdout=subprocess.PIPE, **kwargs) -> subprocess.CompletedProcess:  # noqa: ANN001
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=ROOT, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, errors="backslashreplace", env={**os.environ, **(env or {})}, timeout=120,
                          **kwargs)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [("validate", str(CLEAN)), ("--help",), ("validate", "--help"),
                                  ("schema", "--check")])
def test_an_unwritable_standard_output_is_one_line_and_exit_2(args: tuple) -> None:
    """redcli29 #8 and #16: `> /dev/full` gave an OSError traceback and exit 1 (which diagnose uses
    for 'a failure was found'); `kb --help > /dev/full` exited 0."""
    with open("/dev/full", "w") as full:
        proc = _kb(*args, stdout=full)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "kb: cannot write the output: No space left on device\n", proc.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_diagnose_into_a_full_disk_is_exit_2_not_the_failure_code(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"[ 5.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n")
    for fmt in ("text", "jsonl"):
        with open("/dev/full", "w") as full:
            proc = _kb("diagnose", "--format", fmt, "--fail-on", "info", str(log), stdout=full)
        assert proc.returncode == 2 and proc.stderr.endswith("kb: cannot write the output: No space left on device\n")
        assert "Traceback" not in proc.stderr


def test_text_the_terminal_encoding_cannot_show_is_escaped(tmp_path: Path) -> None:
    """redcli29 #9: PYTHONIOENCODING=ascii (a legacy terminal) gave UnicodeEncodeError tracebacks."""
    entries = tmp_path / "entries" / "cuda"
    entries.mkdir(parents=True)
    text = (CLEAN / "cuda" / "demo-failure.yaml").read_text().replace("severity: high", "severity: hïgh")
    (entries / "demo-failure.yaml").write_text(text, encoding="utf-8")
    proc = _kb("validate", str(tmp_path / "entries"), env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "h\\xefgh" in proc.stdout
    log = tmp_path / "x.log"
    log.write_bytes(b"[ 5.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus. \xff\n")
    proc = _kb("diagnose", "--format", "markdown", str(log), env={"PYTHONIOENCODING": "latin-1"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "seen 1\\xd7" in proc.stdout, proc.stderr
    proc = _kb("diagnose", "--format", "markdown", str(log), env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "seen 1\\xd7" in proc.stdout, proc.stderr
    proc = _kb("diagnose", str(log), env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "\\ufffd" in proc.stdout, proc.stderr


def test_ctrl_c_while_the_command_starts_is_one_line_and_exit_130() -> None:
    """redcli29 #11: SIGINT during the imports printed a KeyboardInterrupt traceback and the
    process died by the signal (-2)."""
    code = ("import os, signal, sys; sys.argv[0] = 'kb'; import generator.cli.commands; "
            "os.kill(os.getpid(), signal.SIGINT); import time; time.sleep(5); print('not reached')")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 130 and proc.stderr == "kb: interrupted\n" and proc.stdout == "", proc


def test_ctrl_c_inside_a_command_is_one_line_and_exit_130(monkeypatch) -> None:
    from generator.cli import commands

    def interrupted(args):  # noqa: ANN001, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "cmd_validate", interrupted)
    result = run_kb("validate", str(CLEAN))
    assert result.code == 130 and result.err == "kb: interrupted\n"


def test_problems_printed_per_file_are_capped_with_a_count(tmp_path: Path) -> None:
    """redcli29 #16: 50,000 duplicate keys printed 100,002 lines."""
    from generator.cli.commands import MAX_PRINTED_PER_FILE

    entries = tmp_path / "entries" / "cuda"
    entries.mkdir(parents=True)
    (entries / "demo-failure.yaml").write_text((CLEAN / "cuda" / "demo-failure.yaml").read_text() + "title: x\n" * 3000)
    result = run_kb("validate", str(tmp_path / "entries"))
    assert result.code == 1
    lines = result.out.splitlines()
    assert len(lines) == 2 * MAX_PRINTED_PER_FILE + 2, len(lines)
    assert lines[-2].endswith(f"demo-failure.yaml: {3000 - MAX_PRINTED_PER_FILE:,} more problems in this file not shown")
    assert "3,000 problems" in result.err or "3000 problems" in result.err


@pytest.mark.parametrize("target, words", [
    ("EMPTY", "no entry files (*.yaml) under this folder"),
    ("/dev/zero", "/dev/zero: is neither a folder nor an entry file"),
    ("MISSING", "MISSING: no such folder"),
])
def test_validate_refuses_a_root_that_holds_no_entries(tmp_path: Path, target: str, words: str) -> None:
    """redcli29 #15: an empty folder, /dev/zero and /proc validated as '0 entries OK', exit 0."""
    (tmp_path / "EMPTY").mkdir()
    path = target if target.startswith("/") else str(tmp_path / target)
    result = run_kb("validate", path)
    assert result.code == 2 and words in result.err and len(result.err.splitlines()) == 1, result.err
    assert "OK" not in result.out


@pytest.mark.parametrize("output, words", [
    ("FOLDER", "is a folder; pass the path of the file to write"),
    ("/dev/full", "/dev/full: is not a regular file (a device, FIFO or socket)"),
    ("MISSING/x.json", "MISSING: no such folder; create it first"),
])
def test_schema_output_that_cannot_be_written_is_one_line(tmp_path: Path, output: str, words: str) -> None:
    """redcli29 #10: --output /dev/full, a folder, or --check of /dev/zero ended in tracebacks, and a
    missing parent folder was created anywhere."""
    (tmp_path / "FOLDER").mkdir()
    path = output if output.startswith("/") else str(tmp_path / output)
    for extra in ((), ("--check",)):
        result = run_kb("schema", "--output", path, *extra)
        assert result.code == 2 and words in result.err and len(result.err.splitlines()) == 1, result.err
    assert not (tmp_path / "MISSING").exists()


@pytest.mark.parametrize("args, words", [
    (("diagnose", "--jobs", "0"), "argument --jobs: '0' is out of range: worker processes are 1 to 256"),
    (("diagnose", "--jobs=-4"), "argument --jobs: '-4' is out of range: worker processes are 1 to 256"),
    (("diagnose", "--jobs", "257"), "argument --jobs: '257' is out of range"),
    (("diagnose", "--jobs", "2.5"), "argument --jobs: '2.5' is not a whole number; give the worker processes as 1 to 256"),
    (("eval", "--min-top1", "nan"), "argument --min-top1: 'nan' is not a rate; give a number from 0 to 1"),
    (("eval", "--min-top1", "inf"), "argument --min-top1: 'inf' is not a rate"),
    (("eval", "--min-top1", "1.01"), "argument --min-top1: '1.01' is not a rate"),
    (("eval", "--min-top1=-0.2"), "argument --min-top1: '-0.2' is not a rate"),
    (("diagnose", "--max-unpacked", "inf"), "argument --max-unpacked: 'inf' is not a size; write it like 512M"),
    (("diagnose", "--max-unpacked", "nan"), "argument --max-unpacked: 'nan' is not a size"),
    (("diagnose", "--max-unpacked", "0.5"), "argument --max-unpacked: '0.5' is out of range: a size is from 1 (byte) to 1024T"),
    (("diagnose", "--max-unpacked", "1025T"), "argument --max-unpacked: '1025T' is out of range"),
    (("diagnose", "--max-unpacked=-1"), "argument --max-unpacked: '-1' is out of range"),
])
def test_numeric_options_out_of_their_range_are_usage_errors(tmp_path: Path, args: tuple, words: str) -> None:
    """Session 30: --jobs 0 or -4 and --min-top1 nan were taken silently (--min-top1 nan let every
    eval pass), --max-unpacked inf was a traceback and 0.5 meant the 16G default."""
    result = run_kb(*args, str(tmp_path))
    lines = result.err.splitlines()
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert lines[0].startswith(f"kb {args[0]}: error: ") and words in lines[0], result.err
    assert lines[1:] == [f"(see 'kb {args[0]} --help')"] and result.out == ""


@pytest.mark.parametrize("option, text, value", [
    ("jobs", "1", 1), ("jobs", "256", 256), ("min_top1", "0", 0.0), ("min_top1", "1", 1.0), ("min_top1", "0.75", 0.75),
    ("max_unpacked", "1", 1), ("max_unpacked", "1.5K", 1536), ("max_unpacked", "1024T", 1 << 50),
])
def test_numeric_options_take_the_ends_of_their_range(option: str, text: str, value: float) -> None:
    command = "eval" if option == "min_top1" else "diagnose"
    args = build_parser().parse_args([command, f"--{option.replace('_', '-')}", text, "x"])
    assert getattr(args, option) == value


def _path_arguments() -> list[tuple[str, str]]:
    """(command, argument) for every argument of every command that names a file or a folder."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    found = []
    for command, p in sorted(sub.choices.items()):
        for action in p._actions:
            if action.dest in ("root", "output", "docs", "paths", "guide", "log", "rules", "folder"):
                found.append((command, action.option_strings[0] if action.option_strings else action.dest))
    return found


PATH_ARGUMENTS = _path_arguments()


def test_every_path_argument_is_in_the_empty_path_check() -> None:
    """A new path argument joins the list below, so that '' is refused there too."""
    assert {f"{c} {a}" for c, a in PATH_ARGUMENTS} == {
        "build root", "build --docs", "diagnose log", "diagnose --rules", "docs --guide", "eval folder", "eval --rules",
        "fmt paths", "new --root", "rules --output", "schema --output", "validate root"}


@pytest.mark.parametrize("command, argument", PATH_ARGUMENTS, ids=[f"{c} {a}" for c, a in PATH_ARGUMENTS])
def test_an_empty_path_is_refused_not_read_as_the_working_folder(command: str, argument: str) -> None:
    """red31 #5: `kb diagnose ""` (an unset variable: kb diagnose "$LOG") walked the whole working
    folder, as Path("") is "."; `kb eval ""` and `kb validate ""` read it too, and --rules ''
    meant the default rules."""
    others = {"new": ["some-failure", "--category", "cuda"], "diagnose": ["x.log"], "eval": ["folder"]}
    args = [command, *others.get(command, []), argument, ""] if argument.startswith("-") else [command, ""]
    result = run_kb(*args, cwd=ROOT)
    lines = result.err.splitlines()
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert lines[0].startswith(f"kb {command}: error: argument ") and "an empty path was given; pass " in lines[0], result.err
    assert lines[1:] == [f"(see 'kb {command} --help')"] and result.out == ""


@pytest.mark.parametrize("command", ["schema", "rules"])
def test_an_output_path_ending_in_a_slash_is_refused(tmp_path: Path, command: str) -> None:
    """red31 #17: `kb schema --output out.json/` wrote the file out.json (Path drops the slash)."""
    target = tmp_path / "out.json"
    result = run_kb(command, "--output", f"{target}/", cwd=ROOT)
    assert result.code == 2 and "ends in '/', which names a folder; pass the file to write" in result.err, result.err
    assert not target.exists() and result.out == ""


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="file names there are Unicode: no undecodable bytes")
@pytest.mark.parametrize("env", [{"LC_ALL": "C.UTF-8"}, {"PYTHONIOENCODING": "utf-8"}], ids=["surrogateescape", "strict"])
def test_a_file_name_that_is_not_utf8_is_written_out_and_every_format_stays_utf8(tmp_path: Path, env: dict) -> None:
    """red31 #8: a name with the byte 0xff went raw into "name" and the headers, so the JSON was
    not UTF-8 and strict consumers refused it (or, with a strict terminal encoding, "\\udcff")."""
    folder = tmp_path / "d8"
    folder.mkdir()
    line = b"[  2.0] NVRM: Xid (PCI:0000:5e:00): 79, pid=1, GPU has fallen off the bus.\n"
    with open(os.fsencode(folder) + b"/bad\xff.log", "wb") as fh:
        fh.write(line)
    (folder / "good.log").write_bytes(line)
    shown = f"{folder}/bad\\xff.log"
    for fmt in ("text", "markdown", "json", "jsonl"):
        proc = subprocess.run([sys.executable, "-m", "generator", "diagnose", "--format", fmt, str(folder)], cwd=ROOT,
                              capture_output=True, env={**os.environ, **env}, timeout=120)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.decode("utf-8")  # strict: no byte that is not UTF-8
        if fmt == "jsonl":
            assert [json.loads(line)["input"]["name"] for line in out.splitlines()] == [shown, f"{folder}/good.log"]
        elif fmt == "json":
            assert [s["name"] for s in json.loads(out)["sources"]] == [shown, f"{folder}/good.log"]
        else:
            assert shown in out and "\\udcff" not in out, out
