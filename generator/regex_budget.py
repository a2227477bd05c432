"""A time limit around one regular-expression run: the last guard against a pattern that
backtracks although its analysis (``generator.backtracking``) found nothing.

Python's regex engine checks for signals while it works, so a timer signal can stop a run
that is taking too long. The guard works in the main thread of a Unix process (where
``kb validate`` and the build run); elsewhere it lets the run go unguarded.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

from .errors import KbError

SECONDS = 1.0


class RegexTimeout(KbError):
    """A pattern ran longer than its budget on one line."""


def _raise(signum: int, frame: object) -> None:
    raise RegexTimeout("timed out")


@contextmanager
def budget(seconds: float = SECONDS) -> Iterator[None]:
    """Raise ``RegexTimeout`` inside the block once ``seconds`` have passed."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
