"""The package's folders follow the data flow, and imports point down it, never back.

entry files -> corpus (load, validate) -> exports (rules.json, open data, fleet formats) -> site
(pages, search, doctor files) -> cli (the `kb` commands). The matcher is self-contained (the log
doctor ships it alone to the browser): it imports nothing of the package, and any stage may use it.
errors, config and atomic are the base every stage stands on.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "generator"
# a stage may import from its own rank or below
RANK = {"base": 0, "matcher": 0, "corpus": 1, "exports": 2, "site": 3, "cli": 4}
BASE = {"errors", "config", "atomic", "__init__", "__main__", "__version__"}


def stage(module: str) -> str:
    """``generator.corpus.model`` -> ``corpus``; top-level modules are the base."""
    parts = module.split(".")
    if module == "generator.__main__":  # `python -m generator` is the CLI
        return "cli"
    if parts[0] != "generator" or len(parts) == 1:
        return "base"
    if parts[1] in RANK:
        return parts[1]
    assert parts[1] in BASE, f"{module}: a top-level module outside the base; put it in the stage it belongs to"
    return "base"


def imports(path: Path, module: str) -> list[tuple[str, int]]:
    """Every package module imported by ``path`` (relative imports resolved), with its line."""
    found = []
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.startswith("generator"):
                found += [(f"{name}.{a.name}" if name == "generator" else name, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.startswith("generator")]
    return found


def module_name(path: Path, root: Path = PACKAGE) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def violations(root: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        own = stage(module)
        for target, line in imports(path, module):
            if own == "matcher" and stage(target) != "matcher":
                found.append(f"{path.relative_to(root.parent)}:{line}: the matcher imports {target}")
            elif RANK[stage(target)] > RANK[own]:
                found.append(f"{path.relative_to(root.parent)}:{line}: {own} imports {target} ({stage(target)}, later in the flow)")
    return found


def test_imports_point_down_the_flow() -> None:
    assert violations() == []


def test_every_module_sits_in_a_stage_or_the_base() -> None:
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top <= BASE - {"__version__"}, f"top-level modules outside the base: {sorted(top - BASE)}"
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()} == set(RANK) - {"base"}


def test_the_check_catches_an_import_back_up_the_flow(tmp_path) -> None:
    pkg = tmp_path / "generator"
    for sub in ("corpus", "site", "matcher"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "corpus" / "model.py").write_text("from generator.site.render import pages\nfrom .load import x\n")
    (pkg / "corpus" / "load.py").write_text("x = 1\n")
    (pkg / "matcher" / "scan.py").write_text("from ..corpus import model\nfrom . import parse\n")
    (pkg / "site" / "render.py").write_text("from generator.corpus.model import Entry\nfrom ..cli import main\n")
    found = violations(pkg)
    assert found == [
        "generator/corpus/model.py:1: corpus imports generator.site.render (site, later in the flow)",
        "generator/matcher/scan.py:1: the matcher imports generator.corpus",
        "generator/site/render.py:2: site imports generator.cli (cli, later in the flow)",
    ], found
