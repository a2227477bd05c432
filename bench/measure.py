"""Time a command and read its peak memory without the bench's own memory in the figure.

A process started straight from the bench is forked from it first, and Linux counts the
forked copy's resident pages in the child's peak (``ru_maxrss``) until it runs the command:
every child would show at least the bench's own size (a bench that loaded the corpus holds
about 90 MiB). So the command is started from a small runner (``python -S``, about 8 MiB),
which waits for it and sends its peak back on a pipe of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

_RUNNER = """
import os, sys, json
fd = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
os.write(fd, json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss]).encode())
sys.exit(0)
"""


def timed(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float, int, bytes, bytes]:
    """Wall seconds, peak RSS in MiB, exit status, stdout and stderr of one run of ``cmd``."""
    read_end, write_end = os.pipe()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-S", "-c", _RUNNER, str(write_end), *cmd], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(write_end,))
    os.close(write_end)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    with os.fdopen(read_end, "rb") as fh:
        status, maxrss_kib = json.loads(fh.read() or b"[127, 0]")
    return wall, maxrss_kib / 1024, status, out, err


def like_installed(out: Path) -> None:
    """Run kb from here on with its modules' bytecode cached (under ``out``), as an installed kb
    has it (pip compiles it at install): a shell that sets PYTHONDONTWRITEBYTECODE would otherwise
    make every timed run compile them anew."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(out / "pycache")
