"""Where the CLI keeps what is costly to redo and depends only on content it can name by hash.

``KB_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpu-failure-atlas``, else ``~/.cache/gpu-failure-atlas``.
Two things live there: compiled Hyperscan databases (``hyperscan-<hash>.db``) and empty marker
files naming rules documents whose patterns passed the backtracking analysis
(``rules-analysed-<sha256>``), so the next run over the same rules skips it. A folder that
cannot be read or written costs only the time: everything is recomputed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    explicit = os.environ.get("KB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpu-failure-atlas"


def read(name: str) -> bytes | None:
    try:
        return (cache_dir() / name).read_bytes()
    except OSError:
        return None


KEEP = 8  # of each kind of file (its name without the hash), the newest kept; older ones go


def write(name: str, data: bytes) -> None:
    """Replace ``name`` whole (a reader never sees half of it); failures are ignored. Each corpus
    version brings new files, so of each kind only the KEEP newest stay."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, folder / name)
        kind = name.rsplit("-", 1)[0] + "-"  # e.g. hyperscan-plan-, hyperscan-, rules-analysed-py311-
        same = sorted((p for p in folder.glob(kind + "*") if p.is_file() and p.name.rsplit("-", 1)[0] + "-" == kind),
                      key=lambda p: p.stat().st_mtime, reverse=True)
        for old in same[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def analysed_marker(rules_hash: str) -> str:
    """The marker of a rules document that passed the analysis under this Python (whose ``re``
    compiled its patterns: another version checks them again)."""
    return f"rules-analysed-py{sys.version_info[0]}{sys.version_info[1]}-" + rules_hash.removeprefix("sha256:")
