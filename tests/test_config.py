"""generator/config.py: the settings a report's links and the "Edit" links come from."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator import config
from generator.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_the_published_address_is_the_one_mkdocs_builds_for() -> None:
    """Reports and the built site must point at the same atlas when nothing is set."""
    default = re.search(r'site_url: !ENV \[KB_SITE_URL, "([^"]+)"\]', (ROOT / "mkdocs.yml").read_text()).group(1)
    assert config.PUBLISHED_SITE_URL == default
    assert config.Settings().site_url == default


def test_site_url_comes_from_the_variable_then_pyproject_then_the_default(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("KB_SITE_URL", raising=False)
    assert config.load(tmp_path).site_url == config.PUBLISHED_SITE_URL  # no pyproject.toml
    (tmp_path / "pyproject.toml").write_text('[tool.kb]\nsite_url = "https://atlas.example.org/"\n')
    assert config.load(tmp_path).site_url == "https://atlas.example.org/"
    monkeypatch.setenv("KB_SITE_URL", "http://127.0.0.1:8000/")
    settings = config.load(tmp_path)
    assert settings.site_url == "http://127.0.0.1:8000/"
    assert settings.edit_url == config.Settings.edit_url  # the variable changes the address only


@pytest.mark.parametrize("value", ["127.0.0.1:8000/", "http://127.0.0.1:8000", "file:///etc/", "javascript:alert(1)//"])
def test_a_bad_site_url_variable_is_one_clear_error(tmp_path: Path, monkeypatch, value: str) -> None:
    monkeypatch.setenv("KB_SITE_URL", value)
    with pytest.raises(InputError) as err:
        config.load(tmp_path)
    assert str(err.value).startswith(f"KB_SITE_URL={value!r}: ")
    assert "http://" in str(err.value) and "end with /" in str(err.value)


def test_kb_diagnose_links_findings_to_the_published_atlas_or_the_address_set() -> None:
    line = b"RuntimeError: CUDA error: an illegal memory access was encountered\n"
    env = {k: v for k, v in os.environ.items() if k != "KB_SITE_URL"}
    urls = []
    for extra in ({}, {"KB_SITE_URL": "http://127.0.0.1:8123/"}):
        proc = subprocess.run([sys.executable, "-m", "generator", "diagnose", "-", "--format", "json"], cwd=ROOT,
                              input=line, capture_output=True, env={**env, **extra})
        assert proc.returncode == 0, proc.stderr
        urls.append(json.loads(proc.stdout)["findings"][0]["url"])
    assert urls == [f"{config.PUBLISHED_SITE_URL}entries/cuda-illegal-memory-access/",
                    "http://127.0.0.1:8123/entries/cuda-illegal-memory-access/"]
