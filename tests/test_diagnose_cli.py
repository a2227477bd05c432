"""`kb diagnose`, `kb rules` and `kb eval` from the command line: inputs, outputs, exit codes."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_kb

DEV = ROOT.parent / "shared" / "logs-dev"


def test_rules_file_has_format_and_hash(tmp_path: Path) -> None:
    out = tmp_path / "rules.json"
    result = run_kb("rules", "--output", str(out), cwd=ROOT)
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    assert doc["format"] == "kb.rules/1" and doc["hash"].startswith("sha256:")
    from generator.matcher import RulesError, check_rules

    check_rules(doc)
    doc["entries"]["xid-79"]["severity"] = "low"
    with pytest.raises(RulesError, match="hash"):
        check_rules(doc)


def test_tampered_rules_file_is_refused_with_one_line(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    run_kb("rules", "--output", str(rules), cwd=ROOT)
    rules.write_text(rules.read_text().replace('"critical"', '"low"', 1))
    log = tmp_path / "a.log"
    log.write_text("hello\n")
    result = run_kb("diagnose", str(log), "--rules", str(rules), cwd=ROOT)
    assert result.code == 2 and "does not match its hash" in result.err and result.err.count("\n") == 1


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_formats(tmp_path: Path, fmt: str) -> None:
    log = tmp_path / "job.log"
    log.write_text("[  12.5] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n")
    result = run_kb("diagnose", str(log), "--format", fmt, cwd=ROOT)
    assert result.code == 0, result.err
    if fmt == "json":
        assert json.loads(result.out)["findings"][0]["id"] == "xid-79"
    else:
        assert "Xid 79" in result.out


def test_standard_input_via_a_real_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "generator", "diagnose", "-", "--format", "json"], cwd=ROOT,
                          input=b"RuntimeError: CUDA error: an illegal memory access was encountered\n",
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["findings"][0]["id"] == "cuda-illegal-memory-access"


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p.write_bytes(b""), "the input is empty"),
        (lambda p: p.mkdir(), "the folder holds no files"),
        (lambda p: None, "no such file"),
    ],
)
def test_bad_inputs_are_one_line_and_exit_2(tmp_path: Path, make, message: str) -> None:
    target = tmp_path / "input.log"
    make(target)
    result = run_kb("diagnose", str(target), cwd=ROOT)
    assert result.code == 2 and message in result.err and result.err.count("\n") == 1 and "Traceback" not in result.err


def test_binary_garbage_is_diagnosed_not_fatal(tmp_path: Path) -> None:
    log = tmp_path / "bin.log"
    garbage = bytes(range(256)) * 50  # NUL, CR, LF, ESC and invalid UTF-8 included
    log.write_bytes(garbage + b"\nNVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n\xff\xfe")
    result = run_kb("diagnose", str(log), "--format", "json", cwd=ROOT)
    assert result.code == 0
    report = json.loads(result.out)
    assert report["findings"][0]["id"] == "xid-79"
    assert report["findings"][0]["first_line"] == garbage.count(b"\n") + 2


def test_a_log_whose_lines_end_in_cr_alone_counts_each_line(tmp_path: Path) -> None:
    """Red team s31: 100 Xid lines ended by CR alone were 'seen 1 time', and a second Xid on the
    same run of CR segments took the first one's place on the clock."""
    xid79 = b"[  %d.0] NVRM: Xid (PCI:0000:5e:00): 79, pid=123, GPU has fallen off the bus.\r"
    log = tmp_path / "console.log"
    log.write_bytes(b"[  1.0] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, An uncorrectable double bit error (DBE) has "
                    b"been detected on GPU in the framebuffer at partition 0, subpartition 0.\r"
                    + b"".join(xid79 % (i + 2) for i in range(100)))
    result = run_kb("diagnose", str(log), "--format", "json", cwd=ROOT)
    report = json.loads(result.out)
    found = {f["id"]: f for f in report["findings"]}
    assert found["xid-79"]["count"] == 100 and found["xid-79"]["first_line"] == 2
    assert found["xid-79"]["last_line"] == 101 and found["xid-48"]["first_line"] == 1
    assert report["input"]["lines"] == 101
    assert any("ends its lines with CR alone" in note and "console.log" in note for note in report["notes"])
    text = run_kb("diagnose", str(log), cwd=ROOT).out
    assert "at 2.000000 s after boot" in text and "seen 100 times" in text


@pytest.mark.skipif(not DEV.is_dir(), reason="../shared/logs-dev is not beside this checkout")
def test_eval_on_the_development_logs() -> None:
    result = run_kb("eval", str(DEV), cwd=ROOT)
    assert "(17 cases: 16 failure logs, 1 healthy)" in result.out, result.out
    assert "top-3: 16/16 failure logs" in result.out, result.out
    top1 = int(result.out.split("top-1: ")[1].split("/")[0])
    assert top1 >= 14, result.out
    assert "false positives on healthy logs: 0/1" in result.out
    assert result.code == 0


def test_eval_on_the_project_fixtures() -> None:
    result = run_kb("eval", str(ROOT / "tests" / "fixtures" / "logs"), cwd=ROOT)
    assert result.code == 0, result.out
    assert "every case right at the top" in result.out, result.out
    assert "false positives on healthy logs: 0/" in result.out
    named, labelled = map(int, result.out.split("named right: ")[1].split()[0].split("/"))
    assert labelled >= 20 and named / labelled >= 0.9, result.out


def test_eval_scores_failure_logs_apart_from_healthy_ones(tmp_path: Path) -> None:
    """A healthy log found clean is not a "top-1 hit": the rates count failure logs only, and
    --min-top1 reads the same rate."""
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "a.log").write_text("NVRM: Xid (PCI:0000:2b:00): 79, pid=1, GPU has fallen off the bus.\n", encoding="utf-8")
    (cases / "b.log").write_text("RuntimeError: CUDA error: out of memory\n", encoding="utf-8")
    for name in ("c", "d", "e"):
        (cases / f"{name}.log").write_text("epoch 1 loss 0.5\nall good\n", encoding="utf-8")
    labels = [{"id": "a", "expected": "xid-79"}, {"id": "b", "expected": "xid-79"}] + [
        {"id": name, "expected": "none"} for name in ("c", "d", "e")]
    (tmp_path / "labels.yaml").write_text(yaml.safe_dump(labels), encoding="utf-8")
    result = run_kb("eval", str(tmp_path), "--min-top1", "0.6", cwd=ROOT)
    assert "(5 cases: 2 failure logs, 3 healthy)" in result.out, result.out
    assert "top-1: 1/2 failure logs (50 %)" in result.out, result.out  # not 4/5 (80 %)
    assert "false positives on healthy logs: 0/3" in result.out, result.out
    assert result.code == 1, result.out  # 50 % < 60 %


def test_eval_lists_every_problem_of_a_hand_edited_labels_file(tmp_path: Path) -> None:
    """A case without id or expected, a repeated id, a scalar for a list: every problem with its
    line, one count, exit 2, no traceback (a KeyError on the first bad case used to end it)."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.log").write_text("all good\n", encoding="utf-8")
    (tmp_path / "labels.yaml").write_text(
        "- id: x\n  expected: none\n- foo: 1\n- id: x\n  expected: xid-79\n  also_acceptable: xid-48\n- 3\n",
        encoding="utf-8")
    result = run_kb("eval", str(tmp_path), cwd=ROOT)
    assert result.code == 2, result.err
    assert "Traceback" not in result.err, result.err
    lines = [line.split(str(tmp_path / "labels.yaml") + ":", 1)[1] for line in result.err.splitlines()
             if str(tmp_path / "labels.yaml") + ":" in line]
    assert lines[:5] == ["3:3: case without `id`", "3:3: case without `expected`",
                         "4:3: case x is listed twice (first on line 1)", "4:3: `also_acceptable` must be a list",
                         "7:3: a case is a mapping with `id` and `expected`, not int"], result.err
    assert "5 problem(s)" in result.err, result.err


def test_eval_says_where_labels_yaml_is_broken(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "labels.yaml").write_text("- id: x\n  expected: [xid-79\n", encoding="utf-8")
    result = run_kb("eval", str(tmp_path), cwd=ROOT)
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert re.search(r"labels\.yaml:3:1: expected ',' or '\]'", result.err), result.err
    (tmp_path / "labels.yaml").write_bytes(b"\xff\xfe- id")
    result = run_kb("eval", str(tmp_path), cwd=ROOT)
    assert result.code == 2 and "not UTF-8 text" in result.err, result.err



def test_eval_refuses_an_alias_bomb_and_paths_out_of_its_folder(tmp_path: Path) -> None:
    """Red team s24: 1 KB of nested aliases as a case id ran for minutes past 1 GB (the id was made
    a string), and an id or a file of '../../..' or '/etc/...' read logs from outside the folder."""
    import time

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.log").write_text("all good\n", encoding="utf-8")
    bomb = "- &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"- &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)) + "- id: *a8\n  expected: *a8\n"
    (tmp_path / "labels.yaml").write_text(bomb, encoding="utf-8")
    started = time.monotonic()
    result = run_kb("eval", str(tmp_path), cwd=ROOT)
    assert time.monotonic() - started < 5
    assert result.code == 2 and "labels.yaml:1:3: a value used again through an alias" in result.err, result.err
    (tmp_path / "labels.yaml").write_text(
        "- id: ../../../../etc/passwd\n  expected: none\n- id: x\n  expected: none\n  files: [/etc/shadow]\n"
        "- id: [1]\n  expected: none\n", encoding="utf-8")
    result = run_kb("eval", str(tmp_path), cwd=ROOT)
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert "1:3: '../../../../etc/passwd' leads outside the eval folder" in result.err
    assert "3:3: '/etc/shadow' leads outside the eval folder" in result.err
    assert "6:3: `id` must be a name, not a list" in result.err

def _label_problems(result, folder: Path) -> list[str]:  # noqa: ANN001 - a conftest Result
    """The problem lines of a `kb eval` run, each without the path of labels.yaml."""
    labels = str(folder / "labels.yaml") + ":"
    return [line.split(labels, 1)[1] for line in result.err.splitlines() if labels in line]


def test_eval_lists_wrongly_typed_label_fields_as_problems(tmp_path: Path) -> None:
    """red31 #1: an item of files that is not a name, a culprit that is not a mapping, an
    initiating that is not text ended in AttributeError tracebacks, once the case was reached."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.log").write_text("all good\n", encoding="utf-8")
    for case in "bcd":
        (tmp_path / "cases" / f"{case}.log").write_text("all good\n", encoding="utf-8")
    (tmp_path / "labels.yaml").write_text(
        "- id: a\n  expected: none\n  files: [f.log, null, {x: 1}]\n"
        "- id: b\n  expected: none\n  culprit: node1\n"
        "- id: c\n  expected: none\n  culprit: {node: [1], rank: [1, x]}\n  initiating: [1]\n  family: 7\n"
        "- id: d\n  expected: none\n  also_acceptable: [[xid-79]]\n- {id: true, expected: none}\n", encoding="utf-8")
    result = run_kb("eval", str(tmp_path), cwd=ROOT)
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert _label_problems(result, tmp_path) == [
        "3:18: each item of `files` must be a file name in the case's folder, not null",
        "3:24: each item of `files` must be a file name in the case's folder, not a mapping",
        "6:12: `culprit` must be a mapping (node: <host name>, rank: <rank or list of ranks>), not text",
        "9:19: `culprit`'s node must be a host name, not a list",
        "9:30: `culprit`'s rank must be a rank number or a list of rank numbers",
        "10:15: `initiating` must be text, not a list",
        "11:11: `family` must be text, not a number",
        "14:21: each item of `also_acceptable` must be an entry id, not a list",
        "15:3: `id` must be a name, not a bool",
        " 9 problem(s); each case needs an `id` (its log is cases/<id>.log) and the `expected` entry id, or none "
        "for a healthy log"], result.err


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_eval_refuses_a_job_file_that_is_no_regular_file(tmp_path: Path, kind: str) -> None:
    """red31 #2: a `files:` entry that was a FIFO or a link to a device was read for ever (a case
    log was refused already, with these words); a folder was dropped without a word."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.log").write_text("all good\n", encoding="utf-8")
    odd = tmp_path / "a" / "odd"
    {"fifo": lambda: os.mkfifo(odd), "device": lambda: odd.symlink_to("/dev/zero"), "folder": odd.mkdir}[kind]()
    (tmp_path / "labels.yaml").write_text("- {id: a, expected: none, files: [f.log, odd]}\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "generator", "eval", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == (f"kb eval: {odd}: not a regular file (a device, a pipe or a folder); a case is a log file\n")


def test_eval_refuses_a_key_given_twice_and_an_expected_id_no_entry_has(tmp_path: Path) -> None:
    """red31 #14: `expected: xid-79, expected: none` scored as `none` in silence, and `expected: 79`
    (no entry id) was a miss that could never be a hit. An id the labels mark `new: true` (a
    failure class the atlas lacks yet), none, hang and an Xid code are fine; an also_acceptable
    id no entry has is a warning, since it can only fail to match."""
    (tmp_path / "cases").mkdir()
    for case in ("a", "b", "c", "d", "e", "f", "g"):
        (tmp_path / "cases" / f"{case}.log").write_text("all good\n", encoding="utf-8")
    (tmp_path / "labels.yaml").write_text(
        "- {id: a, expected: xid-79, expected: none}\n"
        "- {id: b, expected: 79}\n"
        "- {id: c, expected: none, culprit: {rank: 1, rank: 2}}\n"
        "- {id: d, expected: some-new-failure, new: true}\n"
        "- {id: e, expected: hang, also_acceptable: [some-new-failure, xid-1234, none]}\n"
        "- {id: f, expected: xid-79, also_acceptable: [xid-79-typo]}\n"
        "- {id: g, expected: nccl-remote-eror}\n", encoding="utf-8")
    result = run_kb("eval", str(tmp_path), cwd=ROOT)
    assert result.code == 2 and "Traceback" not in result.err, result.err
    hint = ("is no entry id of the rules in use; name an entry (its file name without .yaml), none for a healthy log "
            "or hang, or add `new: true` for a failure class the atlas lacks yet")
    assert _label_problems(result, tmp_path) == [
        "1:29: `expected` is given twice in this case (first on line 1, column 11); YAML keeps only the last one, "
        "silently: remove one",
        f"2:21: case b: `expected` '79' {hint}",
        "3:46: `rank` is given twice in this case (first on line 3, column 37); YAML keeps only the last one, "
        "silently: remove one",
        f"7:21: case g: `expected` 'nccl-remote-eror' {hint}",
        " 4 problem(s); each case needs an `id` (its log is cases/<id>.log) and the `expected` entry id, or none "
        "for a healthy log"], result.err
    labels = (tmp_path / "labels.yaml").read_text(encoding="utf-8").splitlines()
    (tmp_path / "labels.yaml").write_text("\n".join(labels[3:6]) + "\n", encoding="utf-8")  # cases d, e and f
    result = run_kb("eval", str(tmp_path), cwd=ROOT)
    assert result.code == 1 and "(3 cases: 3 failure logs, 0 healthy)" in result.out, result.err
    assert result.err.splitlines() == [
        f"kb eval: warning: {tmp_path / 'labels.yaml'}:3:47: case f: `also_acceptable` 'xid-79-typo' is no entry id of "
        "the rules in use, nor a new one (`new: true`) in this file; it can never match"], result.err
    # --summary (how the field sample's holdout is scored) names no case, in warnings either
    result = run_kb("eval", "--summary", str(tmp_path), cwd=ROOT)
    assert result.code == 1 and "case f" not in result.err and "xid-79-typo" not in result.err
    assert result.err.splitlines() == [
        f"kb eval: warning: {tmp_path / 'labels.yaml'}: 1 `also_acceptable` id(s) name no entry of the rules in use, "
        "nor a new one (`new: true`) in this file; they can never match (listed without --summary)"], result.err


def test_project_fixtures_cover_every_category_of_the_corpus() -> None:
    labels = yaml.safe_load((ROOT / "tests" / "fixtures" / "logs" / "labels.yaml").read_text(encoding="utf-8"))
    category = {path.stem: path.parent.name for path in (ROOT / "kb" / "entries").rglob("*.yaml")}
    covered = {category[case["expected"]] for case in labels if case["expected"] != "none"}
    assert covered == set(category.values()), f"no real-log fixture expects an entry of {sorted(set(category.values()) - covered)}"
    assert len(labels) >= 40
    sources = [case["source"] for case in labels]
    assert all(s.startswith("https://") for s in sources)


def test_the_json_report_is_documented_key_by_key() -> None:
    """Every key a report carries on the real fixtures is explained on docs/diagnose.md."""
    from generator.corpus.validated import load_corpus  # noqa: PLC0415
    from generator.exports.rules import compile_rules  # noqa: PLC0415
    from generator.matcher import Diagnoser  # noqa: PLC0415

    page = (ROOT / "docs" / "diagnose.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`([a-z_]+)`", page.split("## The report as JSON", 1)[1]))
    diagnoser = Diagnoser(compile_rules(load_corpus(ROOT / "kb" / "entries")))
    seen: set[str] = set()
    for log in sorted((ROOT / "tests" / "fixtures" / "logs" / "cases").glob("*.log")):
        report = diagnoser.diagnose_text(log.read_text(encoding="utf-8", errors="replace"))
        seen |= set(report) | set(report["input"]) | set(report["initiating"] or {})
        for finding in report["findings"]:
            seen |= set(finding) | set(finding["where"]) | set(finding["fields"])
    assert {"pci", "device", "xid", "rank"} <= seen  # the fixtures exercise the interesting keys
    assert not seen - documented, f"undocumented report keys: {sorted(seen - documented)}"


def test_a_diagnosis_with_current_rules_does_not_load_the_corpus_stack(tmp_path: Path) -> None:
    """Start-up stays fast: pydantic, YAML and Jinja are only needed when the rules are rebuilt."""
    log = tmp_path / "one.log"
    log.write_text("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n")
    assert run_kb("diagnose", str(log), cwd=ROOT).code == 0  # rebuilds build/rules.json if stale
    probe = ("import sys\nfrom generator import cli\ntry:\n    cli.main(['diagnose', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('pydantic', 'yaml', 'jinja2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe, str(log)], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "xid-79" in out and out.strip().endswith("[]"), out


def test_the_doctor_page_states_the_rankers_rules_as_the_code_has_them() -> None:
    """docs/diagnose.md explains how the root cause is chosen; its figures must be the code's."""
    import inspect

    from generator.matcher import rank

    source = inspect.getsource(rank.Ranker.rank)
    weights = re.search(r"score = ([0-9.]+) \* severity \+ ([0-9.]+) \* specificity \+ ([0-9.]+) \* earliness "
                        r"\+ ([0-9.]+) \* frequency", source)
    assert weights, "the score formula changed: update docs/diagnose.md and this test"
    doc = (ROOT / "docs" / "diagnose.md").read_text(encoding="utf-8")
    section = doc.split("## How the root cause is chosen", 1)[1].split("\n## ", 1)[0]
    for weight, name in zip(weights.groups(), ("severity", "specificity", "earliness", "frequency")):
        assert f"{name} ({round(float(weight) * 100)} %" in section, name
    assert f"more than {rank.CLOCK_TOLERANCE_S:g} s" in section
    assert "caused by previous Xid N" in section and "Xid 154" in section
    assert "Exception raised from" in inspect.getsource(rank._continues) and "`Exception raised from" in section


# Every format in which tools print a failure, with a real log in that format and the entry it
# must name (issue 12, item 3). Fixtures live in tests/fixtures/logs or the field sample's dev part.
FORMATS = [
    ("dmesg, uptime stamps", "logs", "002", "xid-13"),
    ("dmesg -T, wall-clock stamps", "logs", "010", "xid-43"),
    ("syslog / journalctl with host and 'kernel:'", "logs", "003", "xid-13"),
    ("syslog with #012 for the newlines of a multi-line kernel message", "field/dev", "driver-001", "driver-api-mismatch"),
    ("c10d behind [rankN]: prefixes", "logs", "104", "nccl-watchdog-timeout"),
    ("glog headers (I1105 01:26:08.071329 ...)", "field/dev", "containers-010", "k8s-nvidia-runtime-not-default"),
    ("vLLM worker prefix (VllmWorkerProcess pid=N) ERROR ...]", "logs", "144", "cuda-out-of-memory"),
    ("Ray actor prefix (actor pid=N) before NCCL's own", "logs", "145", "nccl-unhandled-cuda-error"),
    ("a monitoring agent's own report (GPUd)", "logs", "142", "xid-79"),
    ("a monitoring agent's event message only (GPUd)", "logs", "143", "xid-119"),
    ("nvidia-smi -q report beside the kernel log", "logs", "020", "pcie-aer-error"),
]


@pytest.mark.parametrize("what, folder, case, expected", FORMATS, ids=[f[0] for f in FORMATS])
def test_each_log_format_has_a_real_fixture_that_is_named_right(real_diagnoser, what: str, folder: str, case: str,
                                                               expected: str) -> None:
    path = ROOT / "tests" / "fixtures" / folder / "cases" / f"{case}.log"
    with path.open("rb") as fh:
        report = real_diagnoser.diagnose(fh)
    failures = [f["id"] for f in report["findings"] if f["role"] != "info"]
    assert failures and failures[0] == expected, (what, failures[:3])


def test_a_message_under_several_layers_of_quoting_is_read(real_diagnoser) -> None:
    """runc's error inside containerd's inside Docker's: each layer escapes the quotes again, and
    7 backslashes stand before each quote; the signature is written for one layer (FORMAT)."""
    line = (rb'docker: Error response from daemon: failed to create shim task: OCI runtime create failed: '
            rb'runc create failed: unable to start container process: error during container init: error running hook #0: '
            rb'error running hook: exit status 1, stdout: , stderr: exec: \\\\\\\"nvidia-container-runtime-hook\\\\\\\": '
            rb'executable file not found in $PATH\\\\n\\\"": unknown.' + b"\n")
    assert line.count(b"\\" * 7) == 2
    report = real_diagnoser.diagnose(io.BytesIO(line))
    failures = [f["id"] for f in report["findings"] if f["role"] != "info"]
    assert failures[:1] == ["container-runtime-hook-missing"], failures


def test_the_origin_line_under_an_error_names_the_package_that_raised_it(real_diagnoser) -> None:
    """PyTorch3D and detectron2 raise the same 'Not compiled with GPU support'; torch 1.9 and later
    print the C++ origin on the next line (the lines of facebookresearch/pytorch3d#1957). The hit on
    the origin line belongs to the error above it and, naming the package, comes first."""
    log = ("Traceback (most recent call last):\n"
           "RuntimeError: Not compiled with GPU support\n"
           "Exception raised from RasterizeMeshesCoarse at C:\\Users\\z\\AppData\\Local\\Temp\\pip-req-build-6zicicmg"
           "\\pytorch3d\\csrc\\rasterize_meshes/rasterize_meshes.h:306 (most recent call first):\n")
    report = real_diagnoser.diagnose(io.BytesIO(log.encode()))
    failures = [f["id"] for f in report["findings"] if f["role"] != "info"]
    assert failures[:2] == ["pytorch3d-not-compiled-with-gpu", "detectron2-not-compiled-with-gpu"], failures
    # without the origin line the message alone stays detectron2's, as before
    alone = real_diagnoser.diagnose(io.BytesIO(b"RuntimeError: Not compiled with GPU support\n"))
    assert [f["id"] for f in alone["findings"]][:1] == ["detectron2-not-compiled-with-gpu"]


XID79_LINE = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n"


@pytest.mark.parametrize("fail_on, code", [("critical", 1), ("high", 1), (None, 0)])
def test_fail_on_turns_a_finding_into_exit_1(tmp_path: Path, fail_on: str | None, code: int) -> None:
    log = tmp_path / "kern.log"
    log.write_text(XID79_LINE)  # Xid 79 is critical
    args = ["diagnose", str(log)] + (["--fail-on", fail_on] if fail_on else [])
    result = run_kb(*args, cwd=ROOT)
    assert result.code == code and "Xid 79" in result.out


def test_quiet_prints_nothing_when_nothing_is_found_and_fail_on_stays_0(tmp_path: Path) -> None:
    healthy = tmp_path / "ok.log"
    healthy.write_text("[    0.000000] Linux version 6.8.0\nNVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07\n")
    result = run_kb("diagnose", str(healthy), "--quiet", "--fail-on", "info", cwd=ROOT)
    assert result.code == 0 and result.out == ""
    bad = tmp_path / "bad.log"
    bad.write_text(XID79_LINE)
    assert "Xid 79" in run_kb("diagnose", str(bad), "--quiet", cwd=ROOT).out


def test_jsonl_writes_one_report_per_input_file(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(XID79_LINE)
    (tmp_path / "b.log").write_text("nothing to see\n")
    result = run_kb("diagnose", str(tmp_path), "--format", "jsonl", "--fail-on", "high", cwd=ROOT)
    lines = result.out.splitlines()
    assert result.code == 1 and len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["input"]["name"].endswith("a.log") and first["findings"][0]["id"] == "xid-79"
    assert second["input"]["name"].endswith("b.log") and second["verdict"] == "no known failure found"


def test_eval_counts_a_note_when_the_thread_only_asked_why_the_job_was_slow(tmp_path: Path, real_diagnoser) -> None:
    """Findings of severity info are listed after the failures: a case whose answer is one (NCCL
    fell back to sockets) is right when the report leads with it, a failure still comes first
    when there is one, and a note on a healthy log is no false positive."""
    from generator.cli.diagnose import evaluate  # noqa: PLC0415

    note = "ubuntu:39964:40050 [6] NCCL INFO Failed to open libibverbs.so[.1]\n"
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    cases = {"slow": (note, "nccl-socket-fallback"), "healthy": (note, "none"),
             "both": (note + oom, "cuda-out-of-memory"), "both-note": (note + oom, "nccl-socket-fallback")}
    (tmp_path / "cases").mkdir()
    for name, (text, _) in cases.items():
        (tmp_path / "cases" / f"{name}.log").write_text(text, encoding="utf-8")
    (tmp_path / "labels.yaml").write_text(yaml.safe_dump([{"id": n, "expected": e} for n, (_, e) in cases.items()]),
                                          encoding="utf-8")
    results = {r.case: r for r in evaluate(tmp_path, real_diagnoser)}
    assert results["slow"].top1 and results["slow"].got == ["nccl-socket-fallback"]
    assert results["healthy"].top1
    assert results["both"].top1 and results["both"].got == ["cuda-out-of-memory", "nccl-socket-fallback"]
    assert not results["both-note"].top1 and results["both-note"].top3


def test_rules_are_rebuilt_when_an_entry_is_removed_or_changed_behind_them(tmp_path: Path) -> None:
    """The rules' freshness is a stamp of every entry file (name, size, time), taken before the
    build reads them: removing an entry, or an edit dated before the rules (as when a file is
    saved while another build was reading), rebuilds them; nothing changed, nothing is rebuilt."""
    from generator.cli.diagnose import ensure_rules

    entries = _small_checkout(tmp_path) / "kb" / "entries"
    out = tmp_path / "build" / "rules.json"
    assert set(ensure_rules(None, entries, out)["entries"]) == {"xid-79", "cuda-out-of-memory", "nccl-remote-error"}
    built = out.stat().st_mtime_ns
    ensure_rules(None, entries, out)
    assert out.stat().st_mtime_ns == built  # current: not rebuilt
    next(entries.rglob("nccl-remote-error.yaml")).unlink()  # the newest file time does not change
    assert set(ensure_rules(None, entries, out)["entries"]) == {"xid-79", "cuda-out-of-memory"}
    oom = next(entries.rglob("cuda-out-of-memory.yaml"))
    text = oom.read_text(encoding="utf-8")
    assert "\nseverity: medium\n" in text
    oom.write_text(text.replace("\nseverity: medium\n", "\nseverity: low\n"), encoding="utf-8")
    past = out.stat().st_mtime - 3600
    os.utime(oom, (past, past))  # saved "before" the rules were written
    assert ensure_rules(None, entries, out)["entries"]["cuda-out-of-memory"]["severity"] == "low"


def test_the_rules_stamp_changes_with_each_module_that_shapes_the_rules(tmp_path: Path) -> None:
    """rules.json carries the closest-wording index (matcher/resemble.py's word list) and the
    prefilter literals (corpus/literals.py): editing either must rebuild the rules, as editing an
    entry does, or a checkout keeps matching with an index its code no longer reads."""
    from generator.cli import diagnose

    entries = _small_checkout(tmp_path) / "kb" / "entries"
    base = diagnose.inputs_stamp(entries)
    assert diagnose.inputs_stamp(entries) == base
    package = ROOT / "generator"
    for name in ("matcher/resemble.py", "corpus/literals.py", "exports/rules.py"):
        assert name in diagnose.RULES_COMPILER
        path = package / name
        st = path.stat()
        try:
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
            assert diagnose.inputs_stamp(entries) != base, name
        finally:
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert diagnose.inputs_stamp(entries) == base


def _small_checkout(tmp_path: Path) -> Path:
    """A checkout-shaped folder with three real entries under kb/entries (links to others dropped)."""
    entries = tmp_path / "kb" / "entries"
    for name in ("xid-79", "cuda-out-of-memory", "nccl-remote-error"):
        src = next((ROOT / "kb" / "entries").rglob(f"{name}.yaml"))
        (entries / src.parent.name).mkdir(parents=True, exist_ok=True)
        doc = yaml.safe_load(src.read_text(encoding="utf-8"))
        for key in ("related", "causes", "caused_by"):  # links to entries this small corpus lacks
            doc.pop(key, None)
        (entries / src.parent.name / src.name).write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return tmp_path


def test_diagnose_uses_the_last_good_rules_while_an_entry_does_not_validate(tmp_path: Path) -> None:
    """A contributor mid-edit still gets a diagnosis: `kb diagnose` warns that the corpus does
    not validate (count and first problem with its position) and uses the rules built before;
    `kb eval` stays strict, and with no earlier rules diagnose fails with the problems."""
    root = _small_checkout(tmp_path)
    log = tmp_path / "job.log"
    log.write_text("[12345.678] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n", encoding="utf-8")
    assert run_kb("diagnose", str(log), cwd=root).code == 0  # builds build/rules.json
    oom = next((root / "kb" / "entries").rglob("cuda-out-of-memory.yaml"))
    oom.write_text(oom.read_text(encoding="utf-8").replace("severity:", "severity: [", 1), encoding="utf-8")
    result = run_kb("diagnose", "--format", "json", str(log), cwd=root)
    assert result.code == 0
    assert json.loads(result.out)["initiating"]["entry"] == "xid-79"
    assert "warning: the corpus does not validate (1 problem in 1 file; first: " in result.err
    assert "cuda-out-of-memory.yaml:" in result.err and "KB001" in result.err
    assert "rules last built from a valid corpus (build/rules.json" in result.err
    labels = tmp_path / "eval"
    (labels / "cases").mkdir(parents=True)
    (labels / "cases" / "a.log").write_text(log.read_text(encoding="utf-8"), encoding="utf-8")
    (labels / "labels.yaml").write_text("- {id: a, expected: xid-79}\n", encoding="utf-8")
    strict = run_kb("eval", str(labels), cwd=root)
    assert strict.code == 1 and "KB001" in strict.out and "the corpus has 1 problem" in strict.err
    assert "warning" not in strict.err
    (root / "build" / "rules.json").unlink()
    fresh = run_kb("diagnose", str(log), cwd=root)
    assert fresh.code == 1 and "KB001" in fresh.out and "warning" not in fresh.err


def test_a_broken_link_and_a_loop_of_links_are_named_as_such(tmp_path: Path) -> None:
    """Red team s29: both were reported as 'no such file', which sends the reader looking for a typo."""
    (tmp_path / "a.log").symlink_to("b.log")
    (tmp_path / "b.log").symlink_to("a.log")
    (tmp_path / "gone.log").symlink_to("rotated-away.log")
    loop = run_kb("diagnose", str(tmp_path / "a.log"))
    assert loop.code == 2 and "a loop of symbolic links" in loop.err, loop.err
    gone = run_kb("diagnose", str(tmp_path / "gone.log"))
    assert gone.code == 2 and "a symbolic link to rotated-away.log, which does not exist" in gone.err, gone.err
    log = tmp_path / "kern.log"
    log.write_text("kernel: eth0 up\n" * 10, encoding="utf-8")
    small = run_kb("diagnose", "--max-unpacked", "1", str(log))
    assert small.code == 2 and "more than 1 byte read" in small.err and "0 MiB" not in small.err, small.err


OOM_LINE = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


def _rotating_folder(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    for name, text in (("a/kern.log", XID79_LINE), ("b/old.log", XID79_LINE), ("c/app.log", OOM_LINE)):
        (logs / name).parent.mkdir(parents=True, exist_ok=True)
        (logs / name).write_text(text, encoding="utf-8")
    return logs


@pytest.mark.parametrize("args", [("--format", "json", "--jobs", "1"), ("--format", "json", "--jobs", "2"),
                                  ("--format", "jsonl")])
def test_a_subfolder_that_vanishes_while_the_folder_is_walked_is_a_note(tmp_path: Path, monkeypatch, args: tuple) -> None:
    """red31 #3: a subfolder removed between listing its parent and listing it (log rotation)
    ended the whole run ('No such file or directory; check that the path names a file')."""
    logs = _rotating_folder(tmp_path)
    real = os.scandir

    def rotated(path=".", *rest):  # noqa: ANN001, ANN002, ANN202
        if not isinstance(path, int) and Path(os.fsdecode(path)) == logs / "b":  # (rmtree lists by descriptor)
            shutil.rmtree(logs / "b")  # gone after logs/ was listed, before b/ is
        return real(path, *rest)

    monkeypatch.setattr(os, "scandir", rotated)
    result = run_kb("diagnose", *args, str(logs), cwd=ROOT)
    note = f"{logs / 'b'}: cannot read it: No such file or directory; skipped"
    assert result.code == 0 and "Traceback" not in result.err, result.err
    if "jsonl" in args:
        reports = [json.loads(line) for line in result.out.splitlines()]
        assert [r["input"]["name"] for r in reports] == [str(logs / "a" / "kern.log"), str(logs / "c" / "app.log")]
        assert result.err == f"kb diagnose: {note}\n"
    else:
        report = json.loads(result.out)
        assert report["notes"] == [note]
        assert {f["id"] for f in report["findings"]} == {"xid-79", "cuda-out-of-memory"}


@pytest.mark.parametrize("args", [("--format", "json", "--jobs", "2"), ("--format", "jsonl")])
def test_a_file_that_vanishes_after_the_folder_was_listed_is_a_note(tmp_path: Path, monkeypatch, args: tuple) -> None:
    """red31 #3: with --jobs the files were stat()ed to deal them out, and with jsonl each was read
    alone: either way a file rotated away after the listing ended the whole run."""
    import generator.cli.diagnose as diagnose_cli

    logs = _rotating_folder(tmp_path)
    real = diagnose_cli.expand_inputs

    def listed_then_rotated(*args):  # noqa: ANN002, ANN202
        files = real(*args)
        (logs / "a" / "kern.log").unlink()
        return files

    monkeypatch.setattr(diagnose_cli, "expand_inputs", listed_then_rotated)
    result = run_kb("diagnose", *args, str(logs), cwd=ROOT)
    note = f"{logs / 'a' / 'kern.log'}: cannot read it: No such file or directory; skipped"
    assert result.code == 0 and "Traceback" not in result.err, result.err
    if "jsonl" in args:
        gone, old, app = (json.loads(line) for line in result.out.splitlines())
        assert gone["notes"] == [note] and not gone["findings"]
        assert old["findings"][0]["id"] == "xid-79" and app["findings"][0]["id"] == "cuda-out-of-memory"
    else:
        report = json.loads(result.out)
        assert report["notes"] == [note]
        assert {f["id"] for f in report["findings"]} == {"xid-79", "cuda-out-of-memory"}
