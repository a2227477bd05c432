"""MkDocs hook: regenerate the corpus pages before every build (and every serve reload).

Listed under ``hooks:`` in mkdocs.yml, so ``mkdocs build`` and ``mkdocs serve`` always see
the current YAML. A corpus problem aborts the build with the validator's own messages.
Set ``KB_ENTRIES`` to build the site from another folder of entries (the benchmarks do).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import time
from pathlib import Path

from mkdocs.exceptions import Abort

from generator.site import csp, page_guard, search_index
from generator.site.build_lock import BuildLock
from generator.corpus import forked
from generator.corpus.checks import run_checks
from generator.corpus.validated import corpus_from_files
from generator.errors import CorpusError, KbError
from generator.corpus.load import load_corpus_files
from generator.site.render import SiteBuild
from generator.site.assets import write_doctor

REPO_ROOT = Path(__file__).resolve().parents[2]
_state: dict = {}  # the corpus loaded before the build, reused after it
_lock = BuildLock(REPO_ROOT)  # one build at a time in this checkout: held from pre-build to post-build


def on_pre_build(config, **kwargs) -> None:  # noqa: ANN001 - MkDocs calls hooks by name
    repo_root = REPO_ROOT
    root = Path(os.environ.get("KB_ENTRIES") or repo_root / "kb" / "entries")
    clock = [time.perf_counter()]
    forks = [forked.forks]  # children forked in each phase (one per phase that used a second core)
    forked_in: dict[str, int] = {}

    def lap(phase: str) -> float:
        clock.append(time.perf_counter())
        forks.append(forked.forks)
        forked_in[phase] = forks[-1] - forks[-2]
        return clock[-1] - clock[-2]

    try:
        _lock.hold()
    except KbError as exc:
        raise Abort(str(exc)) from None
    # everything built here stays alive until the build ends: pausing the cyclic collector
    # keeps it from re-scanning a growing heap (which made large corpora non-linear)
    collecting = gc.isenabled()
    gc.disable()
    try:
        files, problems = load_corpus_files(root, parallel=True)  # on two cores when there are
        phases = {"load": lap("load")}
        problems.extend(run_checks(files, parallel=True))  # two cores when there are
        phases["validate"] = lap("validate")
        if problems:
            raise CorpusError(problems, checked=len(files))
        corpus = corpus_from_files(root, files)
        _state["corpus"] = corpus
        # with two cores, a forked child renders and writes the entry pages meanwhile
        site = SiteBuild(corpus, repo_root, Path(config.docs_dir), parallel=True)
        try:
            generated = site.render()
            _state["rules_text"] = generated.get("data/rules.json")
            index_text, index_path = search_index.serialise(search_index.build(corpus))
            _state["search_index"] = (index_text, index_path)
            config.extra["kb_search_index"] = index_path  # the header's search box reads it from here
            phases["render"] = lap("render")
            site.write(generated)
            phases["write"] = lap("write")
        finally:
            site.close()
    except CorpusError as exc:
        _lock.release()
        for problem in exc.problems:
            print(problem.format(), file=sys.stderr)
        raise Abort(f"the corpus has {exc}; fix them and build again") from None
    except KbError as exc:
        _lock.release()
        raise Abort(str(exc)) from None
    finally:
        if collecting:
            gc.enable()
    _state["timing"] = {"seconds": clock[-1] - clock[0], "phases": phases, "forked": forked_in}


# Dormant code paths in the theme's bundle that would fetch from a CDN or the GitHub API
# (a polyfill for browsers without ResizeObserver, Mermaid diagrams, repository stats).
# We use none of them; rewriting the addresses guarantees that no page can ever reach out.
_THIRD_PARTY_FETCHES = (
    "https://unpkg.com/resize-observer-polyfill",
    "https://unpkg.com/mermaid@11/dist/mermaid.min.js",
    "https://api.github.com",
)


def _finished_page(html: str, where: str) -> str:
    """A built page checked (nothing that runs or fetches, else the build stops) and given the policy."""
    try:
        page_guard.check(html, where)
    except KbError as exc:
        raise Abort(str(exc)) from None
    return csp.inject(html)


def on_post_page(output: str, page, config) -> str:  # noqa: ANN001
    """Finish each page as MkDocs writes it."""
    start = time.perf_counter()
    html = _finished_page(output, page.file.src_uri)
    _state["csp_seconds"] = _state.get("csp_seconds", 0.0) + time.perf_counter() - start
    return html


def on_build_error(error, **kwargs) -> None:  # noqa: ANN001
    _lock.release()


def on_post_build(config, **kwargs) -> None:  # noqa: ANN001
    try:
        _post_build(config)
    finally:
        _lock.release()


def _post_build(config) -> None:  # noqa: ANN001
    site = Path(config.site_dir)
    start = time.perf_counter()
    try:
        write_doctor(_state["corpus"], REPO_ROOT, site, _state.get("rules_text"))
    except KbError as exc:
        raise Abort(str(exc)) from None
    index_text, index_path = _state["search_index"]
    search_dir = (site / index_path).parent
    search_dir.mkdir(parents=True, exist_ok=True)
    for old in search_dir.glob("index.*.json"):
        old.unlink()
    (site / index_path).write_text(index_text, encoding="utf-8")
    for path in (site / "assets" / "javascripts").glob("*.js"):
        text = path.read_text(encoding="utf-8")
        cleaned = text
        for url in _THIRD_PARTY_FETCHES:
            cleaned = cleaned.replace(url, "data:text/plain,blocked")
        if cleaned != text:
            path.write_text(cleaned, encoding="utf-8")
    for source_map in (site / "assets").rglob("*.map"):
        source_map.unlink()
    # The theme's search (off: the atlas has its own) still ships its language packs and worker.
    shutil.rmtree(site / "assets" / "javascripts" / "lunr", ignore_errors=True)
    shutil.rmtree(site / "assets" / "javascripts" / "workers", ignore_errors=True)
    # pages MkDocs writes outside on_post_page (404.html) get the policy here
    for extra in (site / "404.html",):
        if extra.exists():
            extra.write_text(_finished_page(extra.read_text(encoding="utf-8"), extra.name), encoding="utf-8")
    csp.write_headers(site)
    timing_file = os.environ.get("KB_HOOK_TIMING")
    if timing_file and "timing" in _state:  # the build benchmark reads the generator's own share from here
        timing = _state["timing"]
        timing["phases"]["assets"] = time.perf_counter() - start + _state.pop("csp_seconds", 0.0)
        timing["seconds"] += timing["phases"]["assets"]
        Path(timing_file).write_text(json.dumps(timing))
