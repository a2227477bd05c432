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


def _size(file: str) -> int:
    """A file's size to deal by; 0 for one gone since the folder was listed (log rotation): the
    worker dealt it finds it gone and notes it as skipped, as for a file gone before it is read."""
    try:
        return Path(file).stat().st_size
    except OSError:
        return 0


def _deal(files: list[str], workers: int) -> list[list[int]]:
    """Input positions per worker, balanced by size."""
    sizes = [(_size(f), i) for i, f in enumerate(files)]
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
    # worker ignores it rather than print its own KeyboardInterrupt traceback. SIGTERM (the
    # pool's terminate) ends a worker at once: it was blocked while the worker was forked
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    except ValueError:  # not a main thread (a pool of threads in a test): nothing to quiet
        pass
    _INHERITED = diagnoser


class _Terminated(BaseException):
    """SIGTERM reached the parent while its workers ran (raised by ``_on_sigterm``)."""


def _on_sigterm(signum, frame) -> None:  # noqa: ANN001 - a signal handler
    raise _Terminated


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


def diagnose_in_workers(rules: dict, engine: str, files: list[str], workers: int, max_unpacked: int | None,
                        notes: list[str] | None = None) -> dict:
    """One report for ``files`` read by ``workers`` processes; ``notes`` (``expand_inputs``'s) come first."""
    from generator.cli.diagnose import make_diagnoser  # noqa: PLC0415

    shares = _deal(files, workers)
    fork = hasattr(os, "fork")
    ctx = multiprocessing.get_context("fork" if fork else "spawn")
    diagnoser = make_diagnoser(rules, engine)  # the parent folds the workers' results with it too
    # the workers start with SIGINT ignored (a Ctrl-C while they fork, before _inherit runs, would
    # otherwise print a worker's traceback); the parent's own handler is back once they exist.
    # SIGTERM to the parent alone (kill PID, a service manager stopping it) must not leave the
    # workers reading on: it is held back while they fork, then stops the pool (terminate) and
    # ends the parent as the signal would have. A SIGTERM someone set to be ignored stays so.
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        catch_term = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL and hasattr(signal, "pthread_sigmask")
    except ValueError:  # not the main thread: signals are not this thread's to handle
        previous, catch_term = None, False
    if catch_term:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        try:
            pool = ctx.Pool(len(shares), initializer=_inherit, initargs=(diagnoser if fork else None,))
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        with pool:  # leaving it, by an exception too, terminates the workers
            if catch_term:
                signal.signal(signal.SIGTERM, _on_sigterm)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # one sent meanwhile arrives now
            # under fork the workers hold the diagnoser already: the rules need not travel to them
            results = pool.map(_work, [(None if fork else rules, engine, files, share, max_unpacked) for share in shares])
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)  # the workers are gone: end as the signal would have
        raise
    finally:
        if catch_term:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    parts = []
    for status, value in results:
        if status == "error":
            raise InputError(value)
        parts.extend(value)
    job = Job(diagnoser)
    job.notes.extend(notes or [])
    for _pos, part in sorted(parts, key=lambda p: p[0]):  # sources numbered in the order the inputs were given
        job.merge(part)
    return job.finish()
