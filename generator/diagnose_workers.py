"""`kb diagnose` over many inputs with several worker processes.

The inputs are dealt to workers by size (largest first, each to the least loaded worker),
each worker reads its share into a job of its own, and the parent folds the partial
results (tallies, progress marks, sources, notes, flight recorder traces, py-spy stacks)
into one job and ranks once: the same
report as reading everything in one process, with every source numbered in the order the
inputs were given. Each partial result is bounded (a tally keeps counts and a few lines per
failure), so memory does not grow with the inputs' size.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

from .errors import InputError, KbError
from .matcher.artefacts import PySpyReader
from .matcher.job import Job
from .matcher.progress import ProgressTracker
from .matcher.rank import Tally, merge_tallies


def _deal(files: list[str], workers: int) -> list[list[int]]:
    """Input positions per worker, balanced by size."""
    sizes = [(Path(f).stat().st_size, i) for i, f in enumerate(files)]
    shares: list[list[int]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for size, i in sorted(sizes, reverse=True):
        w = loads.index(min(loads))
        shares[w].append(i)
        loads[w] += size
    return [sorted(s) for s in shares if s]


def _work(args: tuple) -> tuple:
    rules, engine, files, positions, max_unpacked = args
    from .diagnose_cli import make_diagnoser, read_into  # noqa: PLC0415 - in the worker process

    try:
        diagnoser = make_diagnoser(rules, engine)
        parts = []
        for pos in positions:  # one job per input, so the parent can number sources in input order
            job = Job(diagnoser, **({"max_unpacked": max_unpacked} if max_unpacked else {}))
            read_into(job, [files[pos]])
            for src in job.sources:
                src.close()
            sources = [(s.info, s.stats) for s in job.sources]
            job.tally.entries = job.tally.xid_entries = None  # the parent has them; not sent back
            spies = [t for spy in job.spies for t in spy.threads]
            parts.append((pos, job.tally, job.progress, sources, job.notes, job.traces, spies, job.stalls, job.boots))
        return ("ok", parts)
    except KbError as exc:
        return ("error", str(exc))


class _Done:
    """A finished source as the report needs it (its reader stayed in the worker)."""

    def __init__(self, index: int, info, stats):  # noqa: ANN001
        self.index, self.info, self.stats, self.closed = index, info, stats, True

    def close(self) -> None:
        pass


def diagnose_in_workers(rules: dict, engine: str, files: list[str], workers: int, max_unpacked: int | None) -> dict:
    from .diagnose_cli import make_diagnoser  # noqa: PLC0415

    diagnoser = make_diagnoser(rules, engine)
    shares = _deal(files, workers)
    ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    with ctx.Pool(len(shares)) as pool:
        results = pool.map(_work, [(rules, engine, files, share, max_unpacked) for share in shares])
    parts = []
    for status, value in results:
        if status == "error":
            raise InputError(value)
        parts.extend(value)
    parts.sort(key=lambda p: p[0])  # sources numbered in the order the inputs were given
    job = Job(diagnoser)
    offset = 0
    spies = PySpyReader(-1)  # the processes of every input's py-spy dumps, renumbered
    job.spies.append(spies)
    for _pos, tally, progress, sources, notes, traces, threads, stalls, boots in parts:
        job.boots.update({offset + i: b for i, b in boots.items()})
        job.stalls.missing.update(stalls.missing)
        job.stalls.reports += stalls.reports
        tally: Tally
        progress: ProgressTracker
        merge_tallies(job.tally, tally, offset)
        job.progress.merge(progress, offset)
        job.progress.latest = max(job.progress.latest, progress.latest)
        for trace in traces:
            trace.source += offset
        job.traces.extend(traces)
        for thread in threads:
            thread.source += offset
        spies.threads.extend(threads)
        for i, (info, stats) in enumerate(sources):
            job.sources.append(_Done(offset + i, info, stats))
        job.notes.extend(notes)
        offset += len(sources)
    return job.finish()
