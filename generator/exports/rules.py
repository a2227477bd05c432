"""Compile the corpus into rules.json, the only thing the log matcher reads.

The rules hold, per entry, what a diagnosis report shows (title, severity, first fix steps,
cascade edges, the page's path) and, per signature, the pattern with its prefilter literal.
``anchors`` is a small set of literals that together cover every signature: the pure-Python
scanner makes one pass over the log per anchor, so fewer anchors make it faster.

The file carries a format version and a SHA-256 of its content, checked on load.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
from pathlib import Path

from generator import __version__, atomic
from generator.errors import InputError
from generator.corpus.validated import Corpus
from generator.corpus.literals import COMMON_WORDS, long_enough, prefilter_literals, rarity, required_runs
from generator.corpus.model import Entry
from generator.exports.line_heads import behind_line_heads
from generator.matcher.parse import XID_TEXTS
from generator.matcher.resemble import index_for

RULES_FORMAT = "kb.rules/1"

# The matcher's own parsers (Xid lines in the driver's and in monitoring tools' spellings,
# fallen-off-the-bus lines, NVSwitch SXid lines) need these on a line before they look at it.
BUILTIN_ANCHORS = (*XID_TEXTS, "fallen off the bus", "SXid")


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
    anchors = _cover(signatures)
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


STRONG_ANCHOR = 7  # rarity() of a token good enough to be shared by several signatures


def _tokens(runs: list[str]) -> list[str]:
    """Candidate anchors for one signature: its literal runs and the words inside them."""
    tokens = {run for run in runs if long_enough(run)}
    for run in runs:
        tokens.update(re.findall(r"[A-Za-z][A-Za-z0-9_]{3,}", run))
    return sorted(tokens)


def _fixed_anchors(signatures: list[dict]) -> list[dict]:
    """The anchors no choice is made for: the matcher's parsers need the builtin ones anyway
    (signatures containing them ride along), and a signature with several alternative literals
    is anchored on each of them."""
    anchors: list[dict] = []
    for text in BUILTIN_ANCHORS:
        riders = [i for i, s in enumerate(signatures)
                  if not s["ignore_case"] and len(s["literals"]) == 1 and text in s["literals"][0]]
        anchors.append({"text": text, "ignore_case": False, "signatures": riders, "builtin": True})
    for i, sig in enumerate(signatures):
        if len(sig["literals"]) > 1:
            for literal in sig["literals"]:
                anchors.append({"text": literal, "ignore_case": sig["ignore_case"], "signatures": [i]})
    return anchors


def _to_cover(signatures: list[dict], ignore_case: bool) -> list[int]:
    """The signatures of one case mode left for the greedy cover: one literal each, and (case
    sensitive) none holding a builtin anchor ('Xid', ...): those are found through it already."""
    return [i for i, s in enumerate(signatures) if s["ignore_case"] == ignore_case and len(s["literals"]) == 1
            and not (not ignore_case and any(b in s["literals"][0] for b in BUILTIN_ANCHORS))]


def anchor_input(pattern: str) -> dict:
    """What the anchor cover needs of one pattern: its prefilter literals, their case mode, and
    (one required literal) the words of it that may serve as its anchor; several literals are
    anchored on each of them."""
    literals, ignore_case = prefilter_literals(pattern)
    runs, _ = required_runs(pattern)
    return {"literals": literals, "ignore_case": ignore_case, "tokens": _tokens(runs) if len(literals) == 1 else []}


def cover_anchors(signatures: list[dict]) -> list[dict]:
    """The anchors the rules export lists for ``signatures`` (each holding ``anchor_input``'s
    keys); the validator's KB028 reads them too, so a weak word shared by several signatures is
    refused where the contributor wrote it."""
    return _cover(signatures)


def _cover(signatures: list[dict]) -> list[dict]:
    """A small set of anchors such that every signature contains at least one of them.

    Greedy set cover: repeatedly take the rare-enough token that covers the most signatures
    not yet covered, preferring rarer tokens on ties (then the first token in sorted order); a
    weak token (a plain word, an everyday log word) is only used for a signature that has
    nothing better. Case-insensitive signatures get their own lower-cased anchors.

    Each token's pending signatures are kept up to date as signatures get covered, and the
    tokens wait in a heap under their last known rank: a token only loses signatures, so its
    rank only falls, and one popped with an up-to-date rank is the best there is. That picks
    what recounting every token each round picks (``tests/test_datasets.py`` checks it against
    that plain loop), in time that grows with the tokens, not with their product with the rounds.
    """
    anchors = _fixed_anchors(signatures)
    for ignore_case in (False, True):
        pending = _to_cover(signatures, ignore_case)
        holders: dict[str, set[int]] = {}  # token -> the pending signatures that hold it
        for i in pending:
            for token in signatures[i]["tokens"] or signatures[i]["literals"]:
                holders.setdefault(token, set()).add(i)
        ranks = {token: _rank(token) for token in holders}

        def key(token: str) -> tuple:
            # smallest first: the best rank, then the token that comes first in sorted order
            weak, strong, rarity_ = ranks[token]
            return (weak, strong, -len(holders[token]) if strong else 0, rarity_, token)

        heap = [key(token) for token in holders]
        heapq.heapify(heap)
        while heap:
            ranked = heapq.heappop(heap)
            best = ranked[-1]
            covered = holders[best]
            if not covered:
                continue  # every signature that holds it is covered already
            fresh = key(best)
            if fresh != ranked:
                heapq.heappush(heap, fresh)  # it lost signatures since it was ranked: rank it again
                continue
            covered = set(covered)
            anchors.append({"text": best, "ignore_case": ignore_case, "signatures": sorted(covered)})
            for i in covered:
                for token in signatures[i]["tokens"] or signatures[i]["literals"]:
                    holders[token].discard(i)
    # every signature is listed under at least one anchor: a line that contains none of a
    # signature's anchors cannot match it
    return anchors


def _rank(token: str) -> tuple[int, int, float]:
    """The parts of an anchor's rank that do not depend on what it covers (smaller is better).

    Sharing an anchor saves a pass only if the anchor is still rare: a plain word ('work',
    'code', 'nvidia') would make a large share of lines candidates, so weak tokens are ranked
    by rarity alone and never merge signatures for coverage."""
    strong = token not in COMMON_WORDS and rarity(token) >= STRONG_ANCHOR
    return (0 if token in COMMON_WORDS else -1, -1 if strong else 0, -min(rarity(token), 24))


def write_rules(corpus: Corpus, path: Path) -> dict:
    rules = compile_rules(corpus)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(rules, indent=1, ensure_ascii=False) + "\n"
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a rules file; remove it and run 'kb rules' again")
    if not path.exists() or path.read_bytes() != text.encode("utf-8"):
        atomic.write_text(path, text)
    return rules
