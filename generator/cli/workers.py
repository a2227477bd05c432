"""`kb diagnose` over many inputs with several worker processes.

The inputs are dealt to workers by size (largest first, each to the least loaded worker),
each worker reads its share into a job of its own, and the parent folds the partial
results (``Job.partial``, ``Job.merge``: tallies, progress, sources, notes, debug artefacts)
into one job and ranks once: the same
report as reading everything in one process, with every source numbered in the order the
inputs were given. Each partial result is bounded (a tally keeps counts and a few lines per
failure), so memory does not grow with the inputs' size. The diagnoser is built once, in the
parent, before the workers are forked: they inherit it compiled (where the platform forks).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path

from generator.errors import InputError, KbError
from generator.matcher.job import Job


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


# In a worker, the parent's diagnoser, handed over by the pool's initializer: under fork it
# reaches the worker in the forked memory, compiled (the prefilter's database, the signatures
# compiled so far), not pickled, instead of each worker building its own. None under 'spawn',
# where each worker builds one from the rules.
_INHERITED = None


def _inherit(diagnoser) -> None:  # noqa: ANN001 - a Diagnoser, or None
    global _INHERITED
    # Ctrl-C reaches the whole process group: the parent stops the pool (terminate), so a
    # worker ignores it rather than print its own KeyboardInterrupt traceback
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not a main thread (a pool of threads in a test): nothing to quiet
        pass
    _INHERITED = diagnoser


def _work(args: tuple) -> tuple:
    rules, engine, files, positions, max_unpacked = args
    from generator.cli.diagnose import make_diagnoser, read_into  # noqa: PLC0415 - in the worker process

    try:
        diagnoser = _INHERITED if _INHERITED is not None else make_diagnoser(rules, engine)
        parts = []
        for pos in positions:  # one job per input, so the parent can number sources in input order
            job = Job(diagnoser, **({"max_unpacked": max_unpacked} if max_unpacked else {}))
            read_into(job, [files[pos]], skip_unreadable=len(files) > 1)
            parts.append((pos, job.partial()))
        return ("ok", parts)
    except KbError as exc:
        return ("error", str(exc))


def diagnose_in_workers(rules: dict, engine: str, files: list[str], workers: int, max_unpacked: int | None) -> dict:
    from generator.cli.diagnose import make_diagnoser  # noqa: PLC0415

    shares = _deal(files, workers)
    fork = hasattr(os, "fork")
    ctx = multiprocessing.get_context("fork" if fork else "spawn")
    diagnoser = make_diagnoser(rules, engine)  # the parent folds the workers' results with it too
    # the workers start with SIGINT ignored (a Ctrl-C while they fork, before _inherit runs, would
    # otherwise print a worker's traceback); the parent's own handler is back once they exist
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: signals are not this thread's to handle
        previous = None
    try:
        pool = ctx.Pool(len(shares), initializer=_inherit, initargs=(diagnoser if fork else None,))
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    with pool:
        # under fork the workers hold the diagnoser already: the rules need not travel to them
        results = pool.map(_work, [(None if fork else rules, engine, files, share, max_unpacked) for share in shares])
    parts = []
    for status, value in results:
        if status == "error":
            raise InputError(value)
        parts.extend(value)
    job = Job(diagnoser)
    for _pos, part in sorted(parts, key=lambda p: p[0]):  # sources numbered in the order the inputs were given
        job.merge(part)
    return job.finish()
