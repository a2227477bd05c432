"""MkDocs hook: regenerate the corpus pages before every build (and every serve reload).

Listed under ``hooks:`` in mkdocs.yml, so ``mkdocs build`` and ``mkdocs serve`` always see
the current YAML. A corpus problem aborts the build with the validator's own messages.
Set ``KB_ENTRIES`` to build the site from another folder of entries (the benchmarks do).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from mkdocs.exceptions import Abort

from generator.corpus import load_corpus
from generator.errors import CorpusError, KbError
from generator.render import pages, write_pages


def on_pre_build(config, **kwargs) -> None:  # noqa: ANN001 - MkDocs calls hooks by name
    repo_root = Path(config.config_file_path).parent
    try:
        corpus = load_corpus(Path(os.environ.get("KB_ENTRIES") or repo_root / "kb" / "entries"))
        write_pages(pages(corpus, repo_root), Path(config.docs_dir))
    except CorpusError as exc:
        for problem in exc.problems:
            print(problem.format(), file=sys.stderr)
        raise Abort(f"the corpus has {exc}; fix them and build again") from None
    except KbError as exc:
        raise Abort(str(exc)) from None


# Dormant code paths in the theme's bundle that would fetch from a CDN or the GitHub API
# (a polyfill for browsers without ResizeObserver, Mermaid diagrams, repository stats).
# We use none of them; rewriting the addresses guarantees that no page can ever reach out.
_THIRD_PARTY_FETCHES = (
    "https://unpkg.com/resize-observer-polyfill",
    "https://unpkg.com/mermaid@11/dist/mermaid.min.js",
    "https://api.github.com",
)


def on_post_build(config, **kwargs) -> None:  # noqa: ANN001
    site = Path(config.site_dir)
    for path in (site / "assets" / "javascripts").glob("*.js"):
        text = path.read_text(encoding="utf-8")
        cleaned = text
        for url in _THIRD_PARTY_FETCHES:
            cleaned = cleaned.replace(url, "data:text/plain,blocked")
        if cleaned != text:
            path.write_text(cleaned, encoding="utf-8")
    for source_map in (site / "assets").rglob("*.map"):
        source_map.unlink()
    # Search language packs for languages other than English (the site's only language).
    shutil.rmtree(site / "assets" / "javascripts" / "lunr", ignore_errors=True)
