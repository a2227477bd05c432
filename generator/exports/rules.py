"""Compile the corpus into rules.json, the only thing the log matcher reads.

The rules hold, per entry, what a diagnosis report shows (title, severity, first fix steps,
cascade edges, the page's path) and, per signature, the pattern with its prefilter literal.
``anchors`` is a small set of literals that together cover every signature: the pure-Python
scanner makes one pass over the log per anchor, so fewer anchors make it faster.

The file carries a format version and a SHA-256 of its content, checked on load.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from generator import __version__, atomic
from generator.errors import InputError
from generator.corpus.validated import Corpus
from generator.corpus.anchors import anchor_input, cover_anchors
from generator.corpus.model import Entry
from generator.exports.line_heads import behind_line_heads
from generator.matcher.resemble import index_for

RULES_FORMAT = "kb.rules/1"


def _first_steps(entry: Entry, limit: int = 3) -> list[dict]:
    return [{"text": s.text.strip(), "command": s.command, "rung": s.rung} for s in entry.fix[:limit]]


def _summary(entry: Entry) -> str:
    return " ".join(entry.summary.split())


def compile_rules(corpus: Corpus) -> dict:
    """The rules document for ``corpus`` (without writing it)."""
    entries: dict[str, dict] = {}
    signatures: list[dict] = []
    xid_entries: dict[str, str] = {}
    for e in corpus.entries:
        entries[e.id] = {
            "title": e.title,
            "category": e.category,
            "severity": e.severity,
            "owner": e.owner,
            "path": f"entries/{e.id}/",
            "summary": _summary(e),
            "fix": _first_steps(e),
            "causes": list(e.causes),
            "caused_by": list(e.caused_by),
            "wrapper": e.wrapper,
            "xid": e.xid.code if e.xid else None,
        }
        if e.xid:
            xid_entries[str(e.xid.code)] = e.id
        for sig in e.signatures:
            signatures.append({
                "entry": e.id,
                "id": sig.id,
                "pattern": behind_line_heads(sig.pattern),  # an anchored one also reads behind a line's head
                **anchor_input(sig.pattern),
            })
    # NVSwitch SXid lines are recognised by the matcher's parser and routed by severity
    sxid_entries = {kind: eid for kind, eid in (("fatal", "nvswitch-sxid-fatal"), ("nonfatal", "nvswitch-sxid-nonfatal"))
                    if eid in entries}
    anchors = cover_anchors(signatures)
    for sig in signatures:
        del sig["tokens"]
    body = {
        "format": RULES_FORMAT,
        "generator": f"gpu-failure-atlas {__version__}",
        "entries": entries,
        "signatures": signatures,
        "anchors": anchors,
        "xid_entries": xid_entries,
        "sxid_entries": sxid_entries,
        "resemble": index_for(corpus.entries),
    }
    body["hash"] = "sha256:" + hashlib.sha256(canonical(body).encode()).hexdigest()
    return body


def canonical(doc: dict) -> str:
    """The JSON text the hash is computed over: sorted keys, no hash field, compact."""
    return json.dumps({k: v for k, v in doc.items() if k != "hash"}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


def write_rules(corpus: Corpus, path: Path) -> dict:
    """Compile and write ``path`` (only when its content changes). An output that is no file to
    replace (a folder, a device such as /dev/full, a FIFO) or cannot be written is an ``InputError``
    naming it; the existing file is compared only when it has the new text's size (never read whole)."""
    import os
    import stat

    rules = compile_rules(corpus)
    text = json.dumps(rules, indent=1, ensure_ascii=False) + "\n"
    data = text.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            info = path.stat()
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise InputError(f"{path}: is a folder, not a rules file; remove it and run 'kb rules' again")
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise InputError(f"{path}: is not a regular file (a device, FIFO or socket); pass --output a file path")
        if info is None or info.st_size != len(data) or path.read_bytes() != data:
            atomic.write_text(path, text)
    except OSError as exc:
        where = os.fsdecode(exc.filename) if exc.filename else str(path)
        raise InputError(f"{where}: cannot write the rules: {exc.strerror or exc}; check that the folder is writable "
                         "and that the disk has room, or pass another --output") from None
    return rules
