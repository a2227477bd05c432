"""Load rules.json and check that it is what the matcher expects.

The file is written by the generator (``generator/exports/rules.py``). Its ``format`` must be one
this matcher understands, and its ``hash`` must equal the SHA-256 of its content, so a
hand-edited or truncated file is refused with a clear message instead of misdiagnosing.

A hash proves nothing against a file written to harm (anyone can compute one), so the
content is checked too: every key the matcher reads is there with the right type, every
pattern compiles and passes the backtracking analysis that validation applies. Whatever the
file holds, loading it ends in a rules document or in one ``RulesError`` line.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path
from typing import Callable

from .backtracking import risks
from . import regular
from .errors import RulesError

SUPPORTED_FORMATS = ("kb.rules/1",)

# An entry's severity, least severe first: `kb diagnose --fail-on` and the ranker order by it, so
# a rules file may hold no other value (the entry model's Severity has the same five).
SEVERITIES = ("info", "low", "medium", "high", "critical")


def canonical(doc: dict) -> str:
    return json.dumps({k: v for k, v in doc.items() if k != "hash"}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


def check(doc: object, where: str = "rules", analyse: bool = True, hashed: bool = True) -> dict:
    """Return ``doc`` if it is a rules document of a supported format with a valid hash.

    ``analyse=False`` skips the backtracking analysis and the test compilation (shape and hash
    are still checked): the log doctor passes it for the rules its own site built and
    validated, served from the same origin as the code that reads them, where both would only
    repeat the build's work at start-up (its matcher then compiles each pattern on first use).
    Rules a user hands over are always analysed.

    ``hashed=False`` skips the document's own hash: the doctor passes it when its worker has
    checked the file's bytes against the SHA-256 in the file's name already (WebCrypto, while
    Python downloads), which refuses an edited or truncated file just the same."""
    if not isinstance(doc, dict):
        raise RulesError(f"{where}: not a rules document (expected a JSON object)")
    fmt = doc.get("format")
    if fmt not in SUPPORTED_FORMATS:
        raise RulesError(f"{where}: rules format {fmt!r} is not supported (this matcher reads {', '.join(SUPPORTED_FORMATS)}); "
                         "rebuild the rules with 'kb rules'")
    expected = doc.get("hash", "")
    if hashed and expected != "sha256:" + hashlib.sha256(canonical(doc).encode()).hexdigest():
        raise RulesError(f"{where}: content does not match its hash (edited or truncated); rebuild it with 'kb rules'")
    for key in ("entries", "signatures", "anchors", "xid_entries"):
        if key not in doc:
            raise RulesError(f"{where}: missing '{key}'")
    problem = _shape_problem(doc, analyse)
    if problem:
        raise RulesError(f"{where}: {problem}; rebuild the rules with 'kb rules'")
    return doc


@functools.lru_cache(maxsize=4096)
def compiled(pattern: str, ignore_case: bool) -> re.Pattern:
    """A signature's compiled pattern, compiled once for the check here and the matcher both."""
    return re.compile(pattern, re.IGNORECASE if ignore_case else 0)


_ENTRY_KEYS = {"title": str, "category": str, "severity": str, "owner": str, "summary": str, "fix": list,
               "causes": list, "caused_by": list}
_SIGNATURE_KEYS = {"entry": str, "id": str, "pattern": str, "literals": list, "ignore_case": bool}
_ANCHOR_KEYS = {"text": str, "ignore_case": bool, "signatures": list}


def _wrong(item: object, keys: dict) -> str | None:
    if not isinstance(item, dict):
        return "not an object"
    for key, kind in keys.items():
        if not isinstance(item.get(key), kind):
            return f"'{key}' missing or not {kind.__name__}"
    return None


def _entry_values(meta: dict) -> str | None:
    """What in an entry of the right shape the report could not use: a severity it cannot order,
    a first step that is not {text, command, rung}, a cascade link that is not an entry id."""
    if meta["severity"] not in SEVERITIES:
        return f"severity {meta['severity']!r} is not one of {', '.join(SEVERITIES)}"
    for i, step in enumerate(meta["fix"]):
        if not isinstance(step, dict) or not isinstance(step.get("text"), str) or not all(
                isinstance(step.get(key), (str, type(None))) for key in ("command", "rung")):
            return f"fix step {i} must be an object with 'text' (and 'command', 'rung': text or null)"
    for key in ("causes", "caused_by"):
        if not all(isinstance(other, str) for other in meta[key]):
            return f"'{key}' must list entry ids"
    return None


def _shape_problem(doc: dict, analyse: bool = True) -> str | None:
    """What in the document the matcher could not use, or None."""
    entries, signatures, anchors = doc["entries"], doc["signatures"], doc["anchors"]
    if not isinstance(entries, dict) or not isinstance(signatures, list) or not isinstance(anchors, list):
        return "'entries' must be an object, 'signatures' and 'anchors' lists"
    for key in ("xid_entries", "sxid_entries"):
        table = doc.get(key, {})
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            return f"'{key}' must map codes to entry ids"
    if not all(k.isdigit() and len(k) <= 6 for k in doc["xid_entries"]):
        return "'xid_entries' keys must be Xid codes"
    for eid, meta in entries.items():
        wrong = _wrong(meta, _ENTRY_KEYS) or _entry_values(meta)
        if wrong:
            return f"entry '{eid}': {wrong}"
    for i, sig in enumerate(signatures):
        wrong = _wrong(sig, _SIGNATURE_KEYS)
        if wrong:
            return f"signature {i}: {wrong}"
        if not all(isinstance(lit, str) for lit in sig["literals"]):
            return f"signature {i}: 'literals' must be text"
        try:
            if analyse:  # judged before compiling: a deep pattern overflows the compiler
                danger = risks(sig["pattern"])
                if danger:
                    return f"signature '{sig['id']}': pattern has {danger[0]}"
                compiled(sig["pattern"], sig["ignore_case"])
        except (re.error, RecursionError, OverflowError, MemoryError) as exc:
            return f"signature '{sig['id']}': pattern does not compile ({str(exc)[:80] or type(exc).__name__})"
    for i, anchor in enumerate(anchors):
        wrong = _wrong(anchor, _ANCHOR_KEYS)
        if wrong:
            return f"anchor {i}: {wrong}"
        if not all(isinstance(n, int) and 0 <= n < len(signatures) for n in anchor["signatures"]):
            return f"anchor {i}: names a signature that does not exist"
    return None


# The corpus's rules.json is about 5 MB; a file many times that size is not one the generator
# wrote, and reading it whole (JSON is parsed in one piece) would cost several times its size.
MAX_RULES_BYTES = 64 << 20


_REBUILD = "give the path of a rules.json that 'kb rules' wrote"


def _read(path: Path) -> bytes:
    """The rules file's bytes: a regular file no larger than MAX_RULES_BYTES, read with that bound
    and without blocking (a device or a pipe named as the rules file never ends)."""
    try:
        return regular.read_regular(path, MAX_RULES_BYTES)
    except regular.Unusable as why:
        raise RulesError(f"{path}: {_unusable(why)}") from None


def _unusable(why: regular.Unusable) -> str:
    """Why the path given as the rules file cannot be one, and what to do."""
    if why.kind == regular.MISSING:
        return "no rules file; build it with 'kb rules'"
    if why.kind == regular.FOLDER:
        return "is a folder, not a rules file; remove it and run 'kb rules'"
    if why.kind == regular.UNREADABLE:
        return f"cannot read the rules file: {why.detail}"
    if why.kind == regular.TOO_BIG:
        return f"{why.size:,} bytes, more than a rules file can be ({MAX_RULES_BYTES >> 20} MiB); {_REBUILD}"
    if why.kind == regular.GREW:
        return f"more than {MAX_RULES_BYTES >> 20} MiB; {_REBUILD}"
    return f"{why.phrase}; {_REBUILD}"


def load(path: str | Path, analysed: Callable[[str], bool] | None = None) -> dict:
    """Read and check a rules file. ``analysed(key)`` says whether something with that key
    passed before (the CLI remembers passes). It is asked first for ``file-<sha256 of the file's
    bytes>``: these very bytes passed every check, so they are only parsed; then for the
    document's own hash: such a document, its hash and shape verified, is not analysed again."""
    path = Path(path)
    raw = _read(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RulesError(f"{path}: not a rules file (not UTF-8 text); remove it and run 'kb rules'") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RulesError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise RulesError(f"{path}: not a rules file: JSON nested too deeply; rebuild it with 'kb rules'") from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise RulesError(f"{path}: not a rules file: {str(exc)[:100]}; rebuild it with 'kb rules'") from None
    if analysed is not None and isinstance(doc, dict) and analysed("file-" + hashlib.sha256(raw).hexdigest()):
        return doc
    known = analysed is not None and isinstance(doc, dict) and isinstance(doc.get("hash"), str) and analysed(doc["hash"])
    return check(doc, str(path), analyse=not known)
