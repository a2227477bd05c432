"""Write a file so that no reader ever sees half of it, and two writers never share a temporary.

The new content goes to a temporary file beside the target, named after this process and a
random token, then replaces the target in one rename. Two builds in one checkout (or a
`mkdocs serve` reading a page while a build rewrites it) therefore never collide.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
