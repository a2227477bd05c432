"""Read a file that must be a regular one, whole, with a size bound and without ever blocking.

A path given as a file may be anything: a FIFO waits for a writer for ever, a device such as
/dev/zero never ends, a folder or a dangling link cannot be read at all. ``read_regular`` looks
at what the path is before opening it (a device is never opened), opens it without blocking,
checks again on the open file that it is a regular one no larger than the bound, and reads at
most one byte past the bound, so a file that grows meanwhile is refused all the same.

Whatever stops it raises ``Unusable``: its ``kind`` says what the path turned out to be and
its ``phrase`` says it in words, so each caller (entry files, the contributor guide, rules.json)
words its own message and hint. Standard library only: the matcher ships to the browser.
"""

from __future__ import annotations

import errno
import os
import stat

MISSING, DANGLING, LOOP, FOLDER, SPECIAL, TOO_BIG, GREW, UNREADABLE = (
    "missing", "dangling", "loop", "folder", "special", "too-big", "grew", "unreadable")

_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_BINARY", 0))


class Unusable(Exception):
    """The path is no regular file that can be read within the bound.

    ``kind`` is one of the module's constants; ``detail`` is what a special file is ("a FIFO"),
    where a dangling link points, or the system's reason for an unreadable file; ``size`` is
    the file's size (``TOO_BIG``) and ``limit`` the bound it was read with."""

    def __init__(self, kind: str, detail: str = "", size: int = 0, limit: int = 0) -> None:
        self.kind, self.detail, self.size, self.limit = kind, detail, size, limit
        super().__init__(self.phrase)

    @property
    def phrase(self) -> str:
        """What the path is, as the rest of a sentence that starts with the path."""
        if self.kind == MISSING:
            return "does not exist"
        if self.kind == DANGLING:
            return f"is a symbolic link to {self.detail!r}, which does not exist"
        if self.kind == LOOP:
            return "is a symbolic link loop"
        if self.kind == FOLDER:
            return "is a folder"
        if self.kind == SPECIAL:
            return f"is not a regular file ({self.detail})"
        if self.kind == TOO_BIG:
            return f"is {self.size:,} bytes, more than {self.limit:,}"
        if self.kind == GREW:
            return f"grew past {self.limit:,} bytes while it was read"
        return f"cannot be read: {self.detail}"


def special_kind(mode: int) -> str:
    """What a file that is neither regular nor a folder is, in words: "a FIFO", "a socket"..."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _refuse_mode(mode: int) -> None:
    """Raise ``Unusable`` for a mode that is not a regular file's."""
    if stat.S_ISDIR(mode):
        raise Unusable(FOLDER)
    if not stat.S_ISREG(mode):
        raise Unusable(SPECIAL, special_kind(mode))


def _why_not(path: str | os.PathLike, exc: OSError) -> Unusable:
    """The ``Unusable`` that explains ``exc``, raised by stat or open on ``path``."""
    if exc.errno == errno.ELOOP:
        return Unusable(LOOP)
    if exc.errno == errno.ENOENT:
        try:
            return Unusable(DANGLING, os.readlink(path))
        except OSError:
            return Unusable(MISSING)
    try:
        _refuse_mode(os.stat(path).st_mode)  # e.g. Windows refuses to open a folder with EACCES
    except Unusable as named:
        return named
    except OSError:
        pass
    return Unusable(UNREADABLE, exc.strerror or str(exc))


def _read_bounded(fd: int, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``fd``: one more than allowed says that it is too long."""
    chunks, size = [], 0
    while size <= limit:
        chunk = os.read(fd, limit + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them; raises ``Unusable``
    saying what the path is otherwise (missing, a link to nowhere, a folder, a FIFO or a device,
    too big, unreadable). Links are followed."""
    try:
        _refuse_mode(os.stat(path).st_mode)  # before opening: opening some devices acts on them
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise _why_not(path, exc) from None
    try:
        info = os.fstat(fd)
        _refuse_mode(info.st_mode)  # it may have been replaced since the stat
        if info.st_size > limit:
            raise Unusable(TOO_BIG, size=info.st_size, limit=limit)
        raw = _read_bounded(fd, limit)
    except OSError as exc:
        raise Unusable(UNREADABLE, exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise Unusable(GREW, limit=limit)
    return raw
