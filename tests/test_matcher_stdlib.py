"""The matcher imports nothing outside the standard library, so it runs unchanged in Pyodide."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MATCHER = Path(__file__).resolve().parents[1] / "generator" / "matcher"


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name.split(".")[0], node.level if hasattr(node, "level") else 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append(((node.module or "").split(".")[0], node.level))
    return found


def test_matcher_imports_only_the_standard_library() -> None:
    offenders = []
    for path in sorted(MATCHER.glob("*.py")):
        for module, level in _imports(path):
            if level:  # relative import inside the matcher
                continue
            if module == "__future__" or module in sys.stdlib_module_names:
                continue
            offenders.append(f"{path.name}: {module}")
    assert not offenders, offenders


def test_the_check_itself_catches_a_foreign_import(tmp_path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import yaml\nfrom pydantic import BaseModel\nfrom . import parse\n")
    modules = [m for m, level in _imports(bad) if not level]
    assert modules == ["yaml", "pydantic"]
    assert all(m not in sys.stdlib_module_names for m in modules)
