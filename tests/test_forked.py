"""The build's second core (generator/corpus/forked.py): a forked child's answers are always
what running the job here would give, and the parallel check and page writing change nothing.
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path

import pytest

from generator.corpus import checks, forked, load
from generator.corpus.load import load_corpus_files
from generator.corpus.validated import load_corpus
from generator.site import render

from conftest import ROOT

GOLDEN = ROOT / "tests" / "golden" / "validate"
needs_fork = pytest.mark.skipif(not forked.capable(), reason="no fork here (or another thread runs)")


@pytest.fixture(autouse=True)
def _an_idle_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """The forked paths are taken even when the test machine is busy."""
    monkeypatch.setattr(forked, "core_free", lambda: True)


@needs_fork
def test_jobs_run_in_the_child_and_results_come_back_in_order() -> None:
    here = os.getpid()
    with forked.Child([os.getpid, lambda: [1, "two", {"three": 3}], lambda: None]) as child:
        assert child.result(0) != here
        assert child.result(1) == [1, "two", {"three": 3}]
        assert child.result(2) is None
    assert child.pid == 0  # reaped


def test_without_a_fork_the_jobs_run_here() -> None:
    with forked.Child([os.getpid], fork=False) as child:
        assert child.result(0) == os.getpid()


@needs_fork
def test_a_job_that_raises_runs_again_here_and_raises_here() -> None:
    ran_here = []

    def job() -> None:
        ran_here.append(os.getpid())  # in the child this list is the child's copy
        raise ValueError("boom")

    with forked.Child([job, lambda: "next"]) as child:
        with pytest.raises(ValueError, match="boom"):
            child.result(0)
        assert ran_here == [os.getpid()]
        assert child.result(1) == "next"  # the child went on with the next job


@needs_fork
def test_a_job_that_warns_runs_again_here_so_the_warning_is_shown_here() -> None:
    def job() -> int:
        warnings.warn("look", UserWarning)
        return os.getpid()

    with forked.Child([job]) as child:
        with pytest.warns(UserWarning, match="look"):
            assert child.result(0) == os.getpid()


@needs_fork
def test_a_child_that_dies_leaves_every_job_not_yet_sent_to_run_here() -> None:
    # (job 1 is never asked for: run here, it would end the test run)
    with forked.Child([lambda: "sent", lambda: os._exit(3), os.getpid]) as child:
        assert child.result(0) == "sent"
        assert child.result(2) == os.getpid()


@needs_fork
def test_a_result_that_cannot_be_pickled_is_made_here() -> None:
    with forked.Child([lambda: (lambda: "made here")]) as child:
        assert child.result(0)() == "made here"


@needs_fork
def test_not_usable_when_switched_off_or_another_thread_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_JOBS", "1")
    assert not forked.usable()
    monkeypatch.delenv("KB_JOBS")
    assert forked.capable()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forked.usable()
    finally:
        stop.set()
        thread.join()


def test_no_fork_while_every_core_is_busy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.undo()  # the real core_free
    loadavg = tmp_path / "loadavg"
    real_open = open

    def fake_open(path, *args, **kwargs):  # noqa: ANN001, ANN202
        return real_open(loadavg if path == "/proc/loadavg" else path, *args, **kwargs)

    monkeypatch.setattr(forked, "open", fake_open, raising=False)
    monkeypatch.setattr(forked, "_cpus", lambda: 2)
    loadavg.write_text("1.00 1.00 1.00 1/300 4242\n")
    assert forked.core_free()
    loadavg.write_text("2.00 1.00 1.00 2/300 4242\n")
    assert not forked.core_free()
    loadavg.write_text("garbled\n")
    assert forked.core_free()


def _golden_files() -> list:
    """Every golden case's files together: problems of every kind, spread over both halves."""
    files = []
    problems = []
    for case in sorted(p for p in GOLDEN.iterdir() if p.is_dir()):
        loaded, found = load_corpus_files(case / "entries")
        files += loaded
        problems += found
    return files


@needs_fork
def test_parallel_checks_give_the_serial_problems_in_the_same_order(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _golden_files()
    serial = checks.run_checks(files)
    assert len(serial) > 20
    monkeypatch.setattr(forked, "PARALLEL_FROM", 1)
    for share in (0.0, 0.3, 0.6, 1.0):
        monkeypatch.setattr(checks, "PARALLEL_SHARE", share)
        assert checks.run_checks(files, parallel=True) == serial
    # each golden case alone as well (a few files: the cut falls between them)
    for case in sorted(p for p in GOLDEN.iterdir() if p.is_dir()):
        loaded, _ = load_corpus_files(case / "entries")
        monkeypatch.setattr(checks, "PARALLEL_SHARE", 0.6)
        assert checks.run_checks(loaded, parallel=True) == checks.run_checks(loaded), case.name


def _files_view(files: list) -> list:
    return [(f.path, f.shown, f.entry, f.text, f.declared_id) for f in files]


@needs_fork
def test_parallel_load_gives_the_serial_files_and_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every golden case's files in one folder (names made unique): problems of every kind on both sides of the cut
    root = tmp_path / "entries"
    for case in sorted(p for p in GOLDEN.iterdir() if p.is_dir()):
        for path in sorted((case / "entries").rglob("*")):
            if path.is_file():
                target = root / case.name / path.relative_to(case / "entries")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())
    serial_files, serial_problems = load_corpus_files(root)
    assert len(serial_problems) >= 20
    monkeypatch.setattr(forked, "PARALLEL_FROM", 1)
    for share in (0.0, 0.5, 0.55, 1.0):
        monkeypatch.setattr(load, "PARALLEL_SHARE", share)
        files, problems = load_corpus_files(root, parallel=True)
        assert problems == serial_problems
        assert _files_view(files) == _files_view(serial_files)
        # a file sent back without its node tree still places its later problems exactly
        assert checks.run_checks(files) == checks.run_checks(serial_files)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@needs_fork
def test_site_build_on_two_cores_writes_what_write_pages_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = load_corpus(ROOT / "tests" / "golden" / "validate" / "clean" / "entries")
    monkeypatch.setattr(forked, "PARALLEL_FROM", 1)
    expected = tmp_path / "serial"
    render.write_pages(render.pages(corpus, ROOT), expected)
    for kind in ("fresh", "stale"):
        docs = tmp_path / kind
        if kind == "stale":  # a page of an entry that no longer exists, and one whose text changed
            (docs / "entries").mkdir(parents=True)
            (docs / "entries" / "gone.md").write_text("old", encoding="utf-8")
            first = next(iter(_tree(expected)))
            (docs / first).parent.mkdir(parents=True, exist_ok=True)
            (docs / first).write_text("changed", encoding="utf-8")
        site = render.SiteBuild(corpus, ROOT, docs, parallel=True)
        assert site.child is not None
        generated = site.render()
        assert not any(rel.startswith("entries/") for rel in generated)  # the child writes those
        site.write(generated)
        assert _tree(docs) == _tree(expected), kind


def test_site_build_in_one_process_renders_every_page(tmp_path: Path) -> None:
    corpus = load_corpus(ROOT / "tests" / "golden" / "validate" / "clean" / "entries")
    site = render.SiteBuild(corpus, ROOT, tmp_path, parallel=False)
    generated = site.render()
    assert generated == render.pages(corpus, ROOT)
    site.write(generated)
    assert _tree(tmp_path) == {rel: text.encode() for rel, text in sorted(generated.items())}
