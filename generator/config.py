"""Project settings read from ``[tool.kb]`` in pyproject.toml, with defaults."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError


@dataclass(frozen=True)
class Settings:
    """Where an entry's YAML can be edited online; ``{path}`` is the path from the repo root."""

    edit_url: str = "https://github.com/gpu-failure-atlas/gpu-failure-atlas/edit/main/{path}"


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
    return Settings(edit_url=edit_url)
