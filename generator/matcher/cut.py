"""Whether an input stops inside a Python traceback, before the line that names the exception.

A traceback prints its frames first and the exception last (``RuntimeError: CUDA error: ...``).
A log copied from a terminal, a forum post or a search excerpt often stops in the frames: the
one line that says what failed is not there, and no signature can name it. The report then
says so, and what to paste, instead of only "no known failure found".

The input ends inside a traceback when its last non-empty line is a frame line (``File "x.py",
line 12, in f``), the source line printed under a frame (and the ``^^^^`` markers under that),
the ``Traceback (most recent call last):`` header itself, or the line that chains a second
traceback ("During handling of the above exception..."). Line heads that launchers and
loggers add (``[rank3]:``, a timestamp) are allowed: the frame is found anywhere in the line.
"""

from __future__ import annotations

import re

_FRAME = re.compile(rb'File "[^"\n]{1,1000}", line [0-9]{1,9}(?:, in |$)')
_HEADER = re.compile(rb"Traceback \(most recent call last\):\s*$")
_CHAINED = re.compile(rb"(?:During handling of the above exception, another exception occurred|"
                      rb"The above exception was the direct cause of the following exception):\s*$")
LOOK_BACK = 6  # non-empty lines read back from the end: a frame, its source line, its markers


def ends_in_traceback(lines: list[tuple[int, bytes]]) -> int | None:
    """The number of the line where an unfinished Python traceback stops (its last frame, its
    header or the chaining line), when the last of ``lines`` (line number, bytes: the input's
    last lines, in order) leave one unfinished; None otherwise.

    After its last frame, a traceback may print the frame's source line and marker lines, each
    indented deeper than the frame under the same line head; anything else (the exception line,
    another program's output) ends it."""
    tail = [(n, line.rstrip(b"\r")) for n, line in lines if line.strip()][-LOOK_BACK:]
    if not tail:
        return None
    number, last = tail[-1]
    if _HEADER.search(last) or _CHAINED.search(last) or _FRAME.search(last):
        return number
    for k in range(len(tail) - 2, -1, -1):
        n, line = tail[k]
        frame = _FRAME.search(line)
        if not frame:
            continue
        lead = line[:frame.start()]
        head = lead.rstrip()
        depth = len(lead) - len(head)
        for _, after in tail[k + 1:]:
            rest = after[len(head):] if after.startswith(head) else None
            if rest is None or len(rest) - len(rest.lstrip()) <= depth:
                return None  # not indented under the frame: the exception line, or other output
        return n
    return None
