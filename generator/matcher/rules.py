"""Load rules.json and check that it is what the matcher expects.

The file is written by the generator (``generator/export.py``). Its ``format`` must be one
this matcher understands, and its ``hash`` must equal the SHA-256 of its content, so a
hand-edited or truncated file is refused with a clear message instead of misdiagnosing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .errors import RulesError

SUPPORTED_FORMATS = ("kb.rules/1",)


def canonical(doc: dict) -> str:
    return json.dumps({k: v for k, v in doc.items() if k != "hash"}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


def check(doc: object, where: str = "rules") -> dict:
    """Return ``doc`` if it is a rules document of a supported format with a valid hash."""
    if not isinstance(doc, dict):
        raise RulesError(f"{where}: not a rules document (expected a JSON object)")
    fmt = doc.get("format")
    if fmt not in SUPPORTED_FORMATS:
        raise RulesError(f"{where}: rules format {fmt!r} is not supported (this matcher reads {', '.join(SUPPORTED_FORMATS)}); "
                         "rebuild the rules with 'kb rules'")
    expected = doc.get("hash", "")
    actual = "sha256:" + hashlib.sha256(canonical(doc).encode()).hexdigest()
    if expected != actual:
        raise RulesError(f"{where}: content does not match its hash (edited or truncated); rebuild it with 'kb rules'")
    for key in ("entries", "signatures", "anchors", "xid_entries"):
        if key not in doc:
            raise RulesError(f"{where}: missing '{key}'")
    return doc


def load(path: str | Path) -> dict:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RulesError(f"{path}: no rules file; build it with 'kb rules'") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesError(f"{path}: cannot read the rules file: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RulesError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    return check(doc, str(path))
