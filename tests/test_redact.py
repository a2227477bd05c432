"""Redaction for sharing: nothing identifying survives, the diagnosis stays the same."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, run_kb
from generator.matcher.redact import Redactor

CASES = sorted((ROOT / "tests" / "fixtures" / "logs" / "cases").glob("*.log")) + \
    sorted((ROOT / "tests" / "fixtures" / "multi").glob("*/original.log"))
IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])")
MAC = re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}(?![\w:])")
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
HOME = re.compile(r"/home/([A-Za-z0-9._-]+)")


def _identifying(text: str, report: dict) -> set[str]:
    """What a reader would not want in a public issue: addresses, e-mails, home users, the hosts the report names."""
    found = {m.group(0) for m in IPV4.finditer(text) if not m.group(0).startswith(("127.", "0.", "192.0.2."))}
    found |= {m.group(0) for m in MAC.finditer(text)} | {m.group(0) for m in EMAIL.finditer(text)}
    found |= {f"/home/{m.group(1)}/" for m in HOME.finditer(text)}  # as a path: 'user' may be part of a placeholder
    for f in report["findings"]:
        found |= {str(p["host"]) for p in f["places"] if p.get("host")}
    return {v for v in found if len(v) >= 3}


@pytest.fixture(scope="module")
def diagnoser(real_diagnoser):
    return real_diagnoser


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.parent.name + "/" + p.name if p.name == "original.log" else p.name)
def test_a_redacted_log_keeps_its_diagnosis_and_loses_what_identifies(diagnoser, case: Path) -> None:
    text = case.read_text(encoding="utf-8", errors="replace")
    original = diagnoser.diagnose_text(text)
    redactor = Redactor()
    redacted = redactor.redact_text(text)
    again = diagnoser.diagnose_text(redacted)
    assert [(f["id"], f["role"]) for f in again["findings"]] == [(f["id"], f["role"]) for f in original["findings"]]
    survivors = {v for v in _identifying(text, original) if v in redacted}
    assert not survivors, survivors
    shared = json.dumps(Redactor().redact_report(original))
    assert not {v for v in _identifying(text, original) if v in shared}


def test_the_same_host_gets_the_same_placeholder_everywhere() -> None:
    r = Redactor()
    out = r.redact_text("Nov  5 01:15:00 gpu-node-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79\n"
                        "srun: error: gpu-node-17: task 3: Killed\nssh gpu-node-17.cluster.example.org as alice@example.org\n")
    assert "gpu-node-17" not in out and "example.org" not in out.replace("person", "")
    assert out.count("host-1") == 3 and "0000:3b:00" in out  # one host, one placeholder; GPU addresses are kept
    assert "alice@example.org" not in out and "person-1@example.com" in out


def test_kb_diagnose_redact_prints_a_report_safe_to_share(tmp_path: Path) -> None:
    log = tmp_path / "node.log"
    log.write_text("Nov  5 01:15:00 dgx-a100-042 kernel: [ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, "
                   "GPU has fallen off the bus.\n/home/jdoe/run.sh token=ghp_abcdefghijklmnopqrstuvwxyz0123\n")
    out = run_kb("diagnose", str(log), "--redact", "--format", "markdown").out
    assert "dgx-a100-042" not in out and "Xid 79" in out and "host-1" in out
    plain = run_kb("diagnose", str(log), "--format", "markdown").out
    assert "dgx-a100-042" in plain


def test_addresses_and_hosts_in_file_names_and_joined_words_are_redacted() -> None:
    """Red team s31: an address or host name next to '_', '-' or a file extension was kept
    ('node-gpu17.example.com-10.1.2.3.log' was printed as it was); a version of five numbers, a
    library's version after a dot and a word ending in digits are no addresses."""
    r = Redactor()
    shown = [r.redact_text(s) for s in ("node-gpu17.example.com-10.1.2.3.log", "rank0_10.1.2.3_out.txt",
                                        "10.1.2.3.log")]
    assert not any("10.1.2.3" in s or "example.com" in s for s in shown), shown
    assert shown[2] == shown[1].split("_")[1] + ".log"  # one address, one placeholder
    kept = ("driver 1.2.3.4.5", "libcudnn.so.9.1.0.70", "build v10.1.2.3", "sm10.1.2.3")
    assert [r.redact_text(s) for s in kept] == list(kept)


def test_jsonl_redacts_every_line_with_one_set_of_placeholders(tmp_path: Path) -> None:
    """With --format jsonl each report was redacted afresh: two different hosts were both
    'host-1' on their lines. One redactor serves the whole output."""
    for name, host in (("a.log", "dgx-alpha-01"), ("b.log", "dgx-beta-02")):
        (tmp_path / name).write_text(f"Nov  5 01:15:00 {host} kernel: [ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, "
                                     "name=python, GPU has fallen off the bus.\n", encoding="utf-8")
    result = run_kb("diagnose", str(tmp_path), "--redact", "--format", "jsonl")
    first, second = result.out.splitlines()
    assert "dgx-" not in result.out
    assert "host-1" in first and "host-2" in second and "host-1" not in second
