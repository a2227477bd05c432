"""Which literal the log matcher finds each signature by: the anchors of the rules export.

The pure-Python scanner makes one pass over a log per anchor, so the rules export
(``exports.rules``) covers every signature with a small set of literals its matches must
contain. A rare literal may serve several signatures; a plain word may not, or every line holding
it would be a candidate for each of them. Validation (``checks.SignatureAnchorsRare``, KB028)
runs the same cover, so a pattern that would share a plain word is refused where it is written.
"""

from __future__ import annotations

import heapq
import re

from generator.corpus.literals import COMMON_WORDS, long_enough, prefilter_literals, rarity, required_runs
from generator.matcher.parse import XID_TEXTS

# The matcher's own parsers (Xid lines in the driver's and in monitoring tools' spellings,
# fallen-off-the-bus lines, NVSwitch SXid lines) need these on a line before they look at it.
BUILTIN_ANCHORS = (*XID_TEXTS, "fallen off the bus", "SXid")

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
    """A small set of anchors such that every signature (each holding ``anchor_input``'s keys)
    contains at least one of them: what the rules export lists, and what the validator's KB028
    reads, so a weak word shared by several signatures is refused where the contributor wrote it.

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


def weak_shared(anchors: list[dict]) -> list[dict]:
    """The anchors of a cover that several signatures share although the anchor is a plain word
    (``rarity`` under STRONG_ANCHOR): every log line holding it is a candidate for each of them.
    The builtin anchors are left out (the matcher's parsers need them whatever the signatures)."""
    return [a for a in anchors
            if not a.get("builtin") and len(a["signatures"]) > 1 and rarity(a["text"]) < STRONG_ANCHOR]


def _rank(token: str) -> tuple[int, int, float]:
    """The parts of an anchor's rank that do not depend on what it covers (smaller is better).

    Sharing an anchor saves a pass only if the anchor is still rare: a plain word ('work',
    'code', 'nvidia') would make a large share of lines candidates, so weak tokens are ranked
    by rarity alone and never merge signatures for coverage."""
    strong = token not in COMMON_WORDS and rarity(token) >= STRONG_ANCHOR
    return (0 if token in COMMON_WORDS else -1, -1 if strong else 0, -min(rarity(token), 24))
