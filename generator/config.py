"""Project settings read from ``[tool.kb]`` in pyproject.toml, with defaults."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from generator.errors import InputError


@dataclass(frozen=True)
class Settings:
    """Where an entry's YAML can be edited online; ``{path}`` is the path from the repo root."""

    edit_url: str = "https://github.com/gpu-failure-atlas/gpu-failure-atlas/edit/main/{path}"
    site_url: str = "http://127.0.0.1:8000/"
    """Base URL of the site that reports link to (default: where `make serve` serves it)."""


def load(repo_root: Path) -> Settings:
    path = repo_root / "pyproject.toml"
    if not path.exists():
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    section = data.get("tool", {}).get("kb", {})
    edit_url = section.get("edit_url", Settings.edit_url)
    if not isinstance(edit_url, str) or "{path}" not in edit_url:
        raise InputError(f"{path}: [tool.kb] edit_url must be text containing {{path}}")
    site_url = section.get("site_url", Settings.site_url)
    if not isinstance(site_url, str) or not site_url.endswith("/"):
        raise InputError(f"{path}: [tool.kb] site_url must be text ending with /")
    return Settings(edit_url=edit_url, site_url=site_url)
