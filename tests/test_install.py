"""The installable `kb`: a wheel built from this checkout carries the rules, and diagnoses from anywhere.

Builds the wheel (setup.py compiles kb/entries into generator/data/rules.json), installs it in a
fresh virtual environment (its dependencies come from the package index, as for a user) and runs
it from a temporary folder that holds no corpus.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("install")
    wheels = tmp / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(wheels)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next(wheels.glob("gpu_failure_atlas-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        rules = json.loads(zf.read("generator/data/rules.json"))
    assert len(rules["entries"]) > 400 and rules["format"] == "kb.rules/1"
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(wheel)],
                         capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return venv


def test_the_installed_kb_diagnoses_from_any_folder(installed: Path, tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text((ROOT / "tests" / "fixtures" / "logs" / "cases" / "013.log").read_text())
    out = subprocess.run([str(installed / "bin" / "kb"), "diagnose", "kern.log", "--format", "json"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["findings"][0]["id"] == "xid-79"


def test_the_installed_kb_says_its_version_and_corpus(installed: Path, tmp_path: Path) -> None:
    from generator.cli.diagnose import ensure_rules  # noqa: PLC0415

    out = subprocess.run([str(installed / "bin" / "kb"), "--version"], cwd=tmp_path, capture_output=True, text=True)
    current = ensure_rules(None) if (ROOT / "kb" / "entries").is_dir() else None
    assert out.returncode == 0 and out.stdout.startswith("kb 0.")
    assert current is None or current["hash"][:19] in out.stdout


def test_authoring_commands_ask_for_a_checkout(installed: Path, tmp_path: Path) -> None:
    out = subprocess.run([str(installed / "bin" / "kb"), "validate"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 2 and "works in a checkout of the atlas" in out.stderr
