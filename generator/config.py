"""Project settings read from ``[tool.kb]`` in pyproject.toml, with defaults.

The site's address, which `kb diagnose` reports link to, is the one the site is built for:
``KB_SITE_URL`` when set (the variable mkdocs.yml's ``site_url`` reads), else ``site_url`` under
``[tool.kb]``, else the published atlas (mkdocs.yml's default; a test keeps the two equal).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from generator.errors import InputError


PUBLISHED_SITE_URL = "https://gpu-failure-atlas.github.io/gpu-failure-atlas/"
SITE_URL_VARIABLE = "KB_SITE_URL"


@dataclass(frozen=True)
class Settings:
    """Where an entry's YAML can be edited online; ``{path}`` is the path from the repo root."""

    edit_url: str = "https://github.com/gpu-failure-atlas/gpu-failure-atlas/edit/main/{path}"
    site_url: str = PUBLISHED_SITE_URL
    """Base URL of the site that reports link to."""


def load(repo_root: Path) -> Settings:
    path = repo_root / "pyproject.toml"
    settings = _from_pyproject(path) if path.exists() else Settings()
    site_url = os.environ.get(SITE_URL_VARIABLE, "")
    if not site_url:
        return settings
    if not site_url.startswith(("http://", "https://")) or not site_url.endswith("/"):
        raise InputError(f"{SITE_URL_VARIABLE}={site_url!r}: the site's address must start with http:// or https:// "
                         "and end with /, e.g. KB_SITE_URL=http://127.0.0.1:8000/")
    return Settings(edit_url=settings.edit_url, site_url=site_url)


def _from_pyproject(path: Path) -> Settings:
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
