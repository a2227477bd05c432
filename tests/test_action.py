"""The GitHub Action (action.yml and .github/action/run.sh): report in the summary, verdict out, gate by severity."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import ROOT

XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n"


def _run(tmp_path: Path, logs: str, fail_on: str = "") -> tuple[int, str, str]:
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    env = {**os.environ, "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
           "RUNNER_TEMP": str(tmp_path), "KB_LOGS": logs, "KB_FAIL_ON": fail_on,
           "KB_SKIP_INSTALL": "1", "KB_PYTHON": sys.executable}  # installing is pip's job; the rest runs as on a runner
    proc = subprocess.run([str(ROOT / ".github" / "action" / "run.sh")], cwd=tmp_path, env=env, capture_output=True, text=True)
    return proc.returncode, summary.read_text() if summary.exists() else "", output.read_text() if output.exists() else ""


def test_the_action_declares_its_inputs_and_runs_the_script() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert set(action["inputs"]) == {"path", "fail-on"} and action["runs"]["using"] == "composite"
    assert ".github/action/run.sh" in action["runs"]["steps"][0]["run"]


def test_the_report_goes_to_the_summary_and_the_gate_follows_fail_on(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "kern.log").write_text(XID79)
    code, summary, output = _run(tmp_path, "logs", "high")
    assert code == 1, summary
    assert summary.startswith("### Diagnosis of") and "Xid 79: GPU has fallen off the bus" in summary
    assert output.strip() == "verdict=Xid 79: GPU has fallen off the bus"
    code, _, _ = _run(tmp_path, "logs")
    assert code == 0


def test_a_missing_log_path_fails_with_the_tools_message(tmp_path: Path) -> None:
    code, summary, _ = _run(tmp_path, "no-such-dir")
    assert code == 2 and summary == ""
