"""`make serve` rebuilds when an entry changes: mkdocs serve with the project's config and hook."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def test_serve_rebuilds_the_page_when_its_yaml_changes(tmp_path: Path) -> None:
    entries = tmp_path / "entries"
    for name in ("xid/xid-79.yaml", "xid/xid-48.yaml"):
        (entries / name).parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / "kb" / "entries" / name).read_text(encoding="utf-8")
        (entries / name).write_text(re.sub(r"\n(related|causes|caused_by): \[[^\]]*\]", "", text), encoding="utf-8")
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("entries", "categories", "xid", "index.md", "data"))
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("docs_dir: docs", f"docs_dir: {docs}").replace("custom_dir: overrides", f"custom_dir: {ROOT / 'overrides'}")
    config = config.replace("  - generator/site/mkdocs_hook.py", f"  - {ROOT / 'generator' / 'site' / 'mkdocs_hook.py'}")
    config = re.sub(r"\nwatch:\n(  - .*\n)+", f"\nwatch:\n  - {entries}\n", config)
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    port = _free_port()
    env = {**os.environ, "KB_ENTRIES": str(entries), "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT),
           "KB_SITE_URL": f"http://127.0.0.1:{port}/"}  # as make serve does: the preview at the root
    proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-f", str(tmp_path / "mkdocs.yml"), "-a", f"127.0.0.1:{port}"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/entries/xid-79/"
    try:
        deadline = time.time() + 90
        while "GPU has fallen off the bus" not in _get(url):
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.time() < deadline, "mkdocs serve did not come up"
            time.sleep(0.5)
        path = entries / "xid" / "xid-79.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace(
            'title: "Xid 79: GPU has fallen off the bus"', 'title: "Xid 79: GPU lost from the PCIe bus (edited)"'), encoding="utf-8")
        deadline = time.time() + 90
        while "GPU lost from the PCIe bus (edited)" not in _get(url):
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.time() < deadline, "the page was not rebuilt after the YAML changed"
            time.sleep(0.5)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
