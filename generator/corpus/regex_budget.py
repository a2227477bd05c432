"""A time limit around one regular-expression run: the last guard against a pattern that
backtracks although its analysis (``generator.backtracking``) found nothing.

Python's regex engine checks for signals while it works, so a timer signal can stop a run
that is taking too long. The guard works in the main thread of a Unix process (where
``kb validate`` and the build run); elsewhere it lets the run go unguarded.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from generator.errors import KbError

SECONDS = 1.0


class RegexTimeout(KbError):
    """A pattern ran longer than its budget on one line."""


def _raise(signum: int, frame: object) -> None:
    raise RegexTimeout("timed out")


@contextmanager
def budget(seconds: float = SECONDS) -> Iterator[None]:
    """Raise ``RegexTimeout`` inside the block once ``seconds`` have passed.

    Budgets nest: an outer one still running when an inner one ends is set again for the time
    it has left (firing at once if that time has passed meanwhile)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds if not outer_left else min(seconds, outer_left))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - started), 0.001))
