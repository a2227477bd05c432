"""Build hook: compile the corpus into the package, so an installed `kb` diagnoses from any directory.

`pip install .`, `pipx install .` and `python -m build` run this: the wheel carries
generator/data/rules.json, built from kb/entries by the same code as `kb rules`. Everything
else about the package is declared in pyproject.toml.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithRules(build_py):
    def run(self) -> None:
        super().run()
        sys.path.insert(0, str(HERE))
        from generator.corpus.validated import load_corpus  # noqa: PLC0415 - needs the build requirements
        from generator.exports.rules import write_rules  # noqa: PLC0415

        entries = HERE / "kb" / "entries"
        if not entries.is_dir():
            raise SystemExit(f"{entries}: no corpus to compile into the package (build from a checkout or its sdist)")
        target = Path(self.build_lib) / "generator" / "data" / "rules.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        rules = write_rules(load_corpus(entries), target)
        print(f"packaged {len(rules['entries'])} entries, {len(rules['signatures'])} signatures into {target}")


setup(cmdclass={"build_py": BuildWithRules})
