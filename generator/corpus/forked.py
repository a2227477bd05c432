"""Work handed to a forked child while this process does its own: the build's second core.

MkDocs builds in one thread, and the generator's own part of a build (validating thousands
of entries, then the open data) is pure Python: a second process is the only way to use a
second core. ``Child(jobs)`` forks once; the child runs ``jobs`` in order (functions of no
arguments that read what this process held at the fork) and sends back each result,
pickled, as soon as it has it. ``child.result(i)`` gives job ``i``'s result.

The answer is always what calling the job here would give. Whenever the child cannot give
it (no fork on this platform, another thread running, the job raised or warned, the child
died, a result would not pickle) the job runs here, at that moment, and its exception or
warning comes from here as it would have. So a job must depend only on data that does not
change after the fork (the loaded files, the corpus), and what it changes in memory is lost
with the child: only its result comes back. Files it writes stay written, so a job that
writes files must be one that can run again here and leave the same files (a job that died
half-way is run again whole).
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
import tempfile
import threading
import warnings
from typing import Any, Callable, Sequence

# Each result is written to a file (in memory where the system allows) and only its place is
# sent through the pipe: a result of megabytes sent through the pipe itself would move in 64 KiB
# steps, each waiting for the other process to be scheduled again, slow on a busy machine.
_FRAME = struct.Struct("<QQB")  # offset in the spill file, length, status
_OK, _REDO = 0, 1
forks = 0  # children forked by this process so far (the build's timing reports them)


def _spill_file() -> int:
    """A file descriptor for the child's results: an anonymous memory file, else an unlinked
    temporary file."""
    try:
        return os.memfd_create("kb-forked", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        handle = tempfile.TemporaryFile()
        return os.dup(handle.fileno())  # the descriptor outlives the file object, closed with it


# a job split over two processes pays off from a few hundred files or entries (a fork and its
# copied pages cost ~10 ms): below this, the build stays in one process
PARALLEL_FROM = 300


def worth(items: int) -> bool:
    """Whether to hand part of ``items`` files or entries to a child now: enough of them, and
    ``usable``."""
    return items >= PARALLEL_FROM and usable()


def usable() -> bool:
    """Whether to fork now: it is safe here (``capable``) and a core is idle (``core_free``)."""
    return capable() and core_free()


def capable() -> bool:
    """Whether forking is safe here: Linux, two CPUs or more, no other thread (a lock another
    thread held at the fork would stay locked in the child), and not switched off with
    ``KB_JOBS=1``."""
    if os.environ.get("KB_JOBS", "").strip() == "1" or not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    return _cpus() >= 2 and threading.active_count() == 1


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def core_free() -> bool:
    """Whether another core is idle right now (the runnable tasks in /proc/loadavg, this one
    included, leave one): on a machine busy with other work, a child would only take turns
    with this process and add the cost of sending its results back."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            running = int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return True
    return running < _cpus()


class Child:
    """Jobs run by one forked child (or here, job by job, when it cannot: see the module)."""

    def __init__(self, jobs: Sequence[Callable[[], Any]], fork: bool | None = None) -> None:
        self.jobs = list(jobs)
        self._next = 0  # the first job whose frame is not read yet
        self._results: dict[int, tuple[int, Any]] = {}
        self.pid = 0
        self._read: Any = None
        self._spill = -1
        if not (usable() if fork is None else fork):
            return
        try:
            spill = _spill_file()
        except OSError:
            return
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (r, w, spill):
                os.close(fd)
            return
        if pid == 0:  # the child: never returns
            os.close(r)
            self._serve(w, spill)
        os.close(w)
        global forks
        forks += 1
        self.pid = pid
        self._spill = spill
        self._read = os.fdopen(r, "rb")

    def _serve(self, fd: int, spill: int) -> None:
        status = 0
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C stops the child at once; the parent redoes nothing
            offset = 0
            with os.fdopen(fd, "wb") as out:
                for job in self.jobs:
                    payload, code = b"", _REDO
                    try:
                        with warnings.catch_warnings(record=True) as caught:
                            value = job()
                        if not caught:  # a warning must come from the parent, where it would have been shown
                            payload, code = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), _OK
                    except BaseException:  # noqa: BLE001 - the parent runs the job again and gets the exception itself
                        payload, code = b"", _REDO
                    view = memoryview(payload)
                    while view:
                        written = os.pwrite(spill, view, offset + len(payload) - len(view))
                        view = view[written:]
                    out.write(_FRAME.pack(offset, len(payload), code))
                    out.flush()
                    offset += len(payload)
        except BaseException:  # noqa: BLE001 - a parent gone (broken pipe): nothing to report to
            status = 1
        finally:
            os._exit(status)  # no atexit handlers, no flush of buffers inherited from the parent

    def result(self, index: int) -> Any:
        """Job ``index``'s result (jobs are asked for in order)."""
        while self._read is not None and self._next <= index:
            self._results[self._next] = self._frame()
            self._next += 1
        if self._read is not None and self._next >= len(self.jobs):
            self.close()
        code, value = self._results.pop(index, (_REDO, None))
        if code == _OK:
            return value
        return self.jobs[index]()

    def _frame(self) -> tuple[int, Any]:
        try:
            head = self._read.read(_FRAME.size)
            if len(head) < _FRAME.size:
                raise EOFError
            offset, size, code = _FRAME.unpack(head)
            if code != _OK:
                return code, None
            chunks, got = [], 0
            while got < size:
                chunk = os.pread(self._spill, size - got, offset + got)
                if not chunk:
                    raise EOFError
                chunks.append(chunk)
                got += len(chunk)
            return code, pickle.loads(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        except Exception:  # noqa: BLE001 - the child died or sent nothing usable: every job left runs here
            self.close()
            return _REDO, None

    def close(self) -> None:
        """Stop the child (if it still runs) and reap it; jobs not read yet will run here."""
        if self._read is not None:
            self._read.close()
            self._read = None
        if self._spill >= 0:
            os.close(self._spill)
            self._spill = -1
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0

    def __enter__(self) -> "Child":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
