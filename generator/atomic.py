"""Write a file so that no reader ever sees half of it, and two writers never share a temporary.

The new content goes to a temporary file beside the target, named after this process and a
random token, then replaces the target in one rename. Two builds in one checkout (or a
`mkdocs serve` reading a page while a build rewrites it) therefore never collide, and a write
that fails part way (a full disk, a quota, a file-size limit) leaves the old file whole.

``replace_text`` rewrites a file someone edits (`kb fmt`, `kb new`): it writes through a
symbolic link to the file it names, keeps the file's permission bits, refuses a read-only file
as an editor would, and keeps a hard-linked file's links (the new text is written in full
beside it first, so the disk has room for it, then copied over it in place).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def write_text(path: Path, text: str) -> None:
    tmp = _temporary(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def replace_text(path: Path, text: str) -> None:
    """Replace (or create) the regular file at ``path`` with ``text``, whole or not at all.

    Raises ``OSError`` (with the path as its filename) when it cannot; the file is then as it was."""
    target = Path(os.path.realpath(path))  # a symbolic link is written through, and stays a link
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if not os.access(target, os.W_OK):
            raise PermissionError(errno.EACCES, "the file is read-only", str(path))
    data = text.encode("utf-8")
    tmp = _temporary(target)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                     stat.S_IMODE(st.st_mode) if st is not None else 0o666)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))  # the umask narrowed what os.open was given
            if st.st_nlink > 1:  # a rename would split the links: copy the checked text over the file
                try:
                    with open(target, "r+b") as fh:
                        fh.write(data)
                        fh.truncate()
                    return
                except OSError:
                    pass  # the complete text is beside it: put it in place by rename after all
        os.replace(tmp, target)
    except OSError as exc:
        if exc.filename is None or Path(exc.filename) == tmp:
            exc.filename = str(path)  # say which file could not be written, not which temporary
        raise
    finally:
        tmp.unlink(missing_ok=True)
