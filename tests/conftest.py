"""Shared fixtures: the repository root, a CLI runner, and the built site (built once)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# the CLI's cache (compiled Hyperscan databases, rules analysed) in a folder of this run, never the
# user's: a test sees the cold path unless it made the cache itself; processes it starts inherit it
os.environ["KB_CACHE_DIR"] = tempfile.mkdtemp(prefix="kb-test-cache-")


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_kb(*args: str, cwd: Path | None = None) -> Result:
    """Run the kb CLI in-process (fast) from ``cwd``; returns exit code, stdout, stderr."""
    from generator.cli import commands as cli

    old = Path.cwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        if cwd:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = cli.main(list(args))
            except SystemExit as exc:  # argparse exits for --help and usage errors
                code = int(exc.code or 0)
    finally:
        os.chdir(old)
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture
def kb():
    return run_kb


@pytest.fixture(scope="session")
def real_diagnoser():
    """A Diagnoser over the real corpus's rules (rebuilt from kb/entries when stale)."""
    from generator.cli.diagnose import ensure_rules
    from generator.matcher import Diagnoser

    old = Path.cwd()
    os.chdir(ROOT)
    try:
        return Diagnoser(ensure_rules(None))
    finally:
        os.chdir(old)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """Build the real site once per session with mkdocs --strict; returns the site folder."""
    out = tmp_path_factory.mktemp("site")
    docs = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "docs", docs, dirs_exist_ok=True)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def mkdocs_config() -> dict:
    """mkdocs.yml as data: `!ENV [NAME, default]` gives its default, `!!python/name:` tags give None."""
    import yaml  # noqa: PLC0415

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!ENV", lambda loader, node: loader.construct_sequence(node)[-1])
    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)  # noqa: S506 - SafeLoader subclass


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001 - pytest's hook
    """The build's fork tests (test_forked.py) run first: a fork is taken only in a process with
    one thread (generator/corpus/forked.capable), and the browser tests leave their site servers'
    threads running until the session ends."""
    items.sort(key=lambda item: getattr(getattr(item, "module", None), "__name__", "") != "test_forked")
