"""One build at a time in a checkout: the generator writes docs/ and build/, which two builds
running at once (a `mkdocs serve` and a `mkdocs build`, say) would write over each other.

``hold()`` takes an exclusive lock on ``build/.build.lock``; a second build waits for it,
saying so once, and gives up with a clear message after ``WAIT_S``. The operating system
drops the lock when its process ends, so a crashed build never leaves the checkout locked.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from generator.errors import BuildError

WAIT_S = 600.0

try:
    import fcntl
except ImportError:  # not on Unix: builds are not serialised
    fcntl = None  # type: ignore[assignment]


class BuildLock:
    def __init__(self, root: Path):
        self.path = root / "build" / ".build.lock"
        self.handle = None

    def hold(self, wait_s: float = WAIT_S) -> None:
        if fcntl is None or self.handle is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+")
        deadline = time.monotonic() + wait_s
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    handle.close()
                    raise BuildError(f"another build in this checkout has held {self.path} for {wait_s:.0f} s; "
                                     "wait for it to finish (or stop it) and build again") from None
                if not told:
                    holder = self.path.read_text(encoding="utf-8").strip() or "another process"
                    print(f"kb: another build is running in this checkout ({holder}); waiting for it to finish",
                          file=sys.stderr)
                    told = True
                time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        self.handle = handle

    def release(self) -> None:
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None
