"""Static analysis of signature patterns: the literal text every match contains.

It works on the parse tree of Python's own regular-expression parser, so they judge the
pattern exactly as ``re`` will run it.

- ``required_runs`` lists the literal strings every match must contain, and
  ``prefilter_literals`` picks the rarest of them (or the alternatives of a required
  alternation): a line without it cannot match, so the matcher runs the regex only on
  lines that contain it.
- ``names_its_own`` tells whether every match holds a literal of the product's own, not only
  everyday log words (``everyday_words``); validation's KB027 uses it.
Backtracking risk is judged in ``generator.backtracking``.
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Iterator
from re import _constants as C  # type: ignore[attr-defined]
from re import _compiler  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]

from generator.matcher.backtracking import parse as _parse_cached



def compile_pattern(pattern: str) -> re.Pattern:
    """``re.compile`` from the cached parse tree, so a pattern is parsed once per build.

    Not cached itself: compiled patterns are large, and only one validator needs them."""
    return _compiler.compile(parse(pattern))


def parse(pattern: str) -> P.SubPattern:
    """The parse tree of ``pattern``, shared with the backtracking analysis (cached there;
    validation and rule export both walk it; never mutated)."""
    return _parse_cached(pattern)


def _flatten(items: list) -> list:
    """Inline non-capturing and capturing groups that hold one alternative and no flags."""
    flat: list = []
    for op, av in items:
        if op is C.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            if not add_flags and not del_flags:
                flat.extend(_flatten(list(sub)))
                continue
        flat.append((op, av))
    return flat


# how many patterns (and literals) the analyses below keep: every signature of a large corpus
# (10,000 in the 5,000-entry build benchmark), so that the rules export after validation finds
# each pattern's literals already worked out instead of parsing the pattern again
CACHED = 1 << 16

RUN = object()  # _parts' marker of a run of literal characters


def _parts(items: list) -> Iterator[tuple[object, object]]:
    """A parse tree's items in order, with each run of literal characters joined into one
    ``(RUN, text)``; any other item as ``(op, av)``."""
    current: list[str] = []
    for op, av in _flatten(items):
        if op is C.LITERAL:
            current.append(chr(av))
            continue
        if current:
            yield RUN, "".join(current)
            current = []
        yield op, av
    if current:
        yield RUN, "".join(current)


def _required_body(op: object, av: object) -> list | None:
    """The items of a group or repeat that every match of it contains, or None."""
    if op is C.SUBPATTERN and not (av[1] & re.IGNORECASE):
        return list(av[3])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and av[0] >= 1:
        return list(av[2])  # the body appears at least once
    if op is C.ATOMIC_GROUP:
        return list(av)
    return None


def _scan(items: list) -> tuple[list[str], list[list[str]]]:
    """Literal runs every match contains, and required alternations (each a list of the
    best literal of every alternative), found by walking the parse tree."""
    runs: list[str] = []
    branches: list[list[str]] = []
    for op, av in _parts(items):
        if op is RUN:
            runs.append(av)
        elif op is C.BRANCH:
            lits = _alternatives_literals(av[1])
            if lits:
                branches.append(lits)
        elif (body := _required_body(op, av)) is not None:
            inner_runs, inner_branches = _scan(body)
            runs += inner_runs
            branches += inner_branches
    return runs, branches


_HANDED: dict[str, tuple[list[str], list[list[str]], bool]] = {}  # scans made by another process (``take_scans``)


@functools.lru_cache(maxsize=CACHED)
def _scan_pattern(pattern: str) -> tuple[list[str], list[list[str]], bool]:
    """``_scan`` of the whole pattern and its ignore-case flag (cached; never mutated)."""
    handed = _HANDED.pop(pattern, None)
    if handed is not None:
        return handed
    tree = parse(pattern)
    return *_scan(list(tree)), bool(tree.state.flags & re.IGNORECASE)


def scans(patterns: list[str]) -> dict[str, tuple[list[str], list[list[str]], bool]]:
    """The scans of ``patterns`` that work out (a pattern that does not parse is left out),
    for another process to ``take_scans``: a forked validator hands back what it worked out,
    so that the rules export in the parent does not parse those patterns again."""
    out = {}
    for pattern in patterns:
        try:
            out[pattern] = _scan_pattern(pattern)
        except Exception:  # noqa: BLE001 - reported by validation; the parent scans it itself if ever asked
            continue
    return out


def take_scans(handed: dict[str, tuple[list[str], list[list[str]], bool]]) -> None:
    """Use scans made by another process (``scans``) as if made here: the same pure function
    of the pattern text."""
    _HANDED.update(handed)


@functools.lru_cache(maxsize=CACHED)
def _required_runs(pattern: str) -> tuple[tuple[str, ...], bool]:
    runs, _branches, ignore_case = _scan_pattern(pattern)
    return tuple(r.lower() for r in runs) if ignore_case else tuple(runs), ignore_case


def required_runs(pattern: str) -> tuple[list[str], bool]:
    """Literal runs every match contains, and whether the pattern ignores case.

    With ignore-case the runs are returned lower-cased.
    """
    runs, ignore_case = _required_runs(pattern)
    return list(runs), ignore_case


MIN_LITERAL = 4


def long_enough(literal: str) -> bool:
    """Whether a literal is long enough to anchor a signature: MIN_LITERAL characters, or three
    characters of at least 2 * MIN_LITERAL bytes in UTF-8 (the scanners look for bytes: a
    translated shell's ``已杀死``, "Killed", is three characters but nine bytes)."""
    core = literal.strip()
    return len(core) >= MIN_LITERAL or (len(core) >= 3 and len(core.encode("utf-8")) >= 2 * MIN_LITERAL)


_PLAIN_WORD = re.compile(r"\s*[a-z]+\s*")
# Words so frequent in healthy training, NCCL and kernel logs that scanning for them finds
# a large share of lines; a signature is anchored on something rarer when it can be.
COMMON_WORDS = {
    "error", "Error", "ERROR", "errors", "warning", "Warning", "WARNING", "info", "INFO", "failed", "Failed",
    "NCCL", "CUDA", "cuda", "rank", "Rank", "with", "from", "that", "this", "line", "File", "file", "self",
    "python", "torch", "kernel", "process", "Process", "memory", "device", "Device", "time", "step", "loss",
    "main", "return", "call", "last", "detected", "running", "while", "into", "data", "node", "host",
    "NVIDIA", "nvidia", "Nvidia", "DataLoader", "dataloader", "driver", "Driver", "version", "Version",
}
# English function words: a phrase made of them and everyday log words (' out of memory',
# 'failed to ') reads like prose any log may hold ('no out of memory yet'), however long it is.
FUNCTION_WORDS = {
    "a", "an", "the", "of", "to", "in", "on", "at", "for", "by", "or", "and", "is", "are", "was", "be",
    "been", "not", "no", "out", "up", "yet", "as", "it", "its", "all", "any", "can", "has", "have", "had",
    "do", "does", "did", "will", "so", "if", "but",
}


def _everyday(word: str) -> bool:
    return word in COMMON_WORDS or word.lower() in FUNCTION_WORDS


@functools.lru_cache(maxsize=CACHED)
def rarity(run: str) -> float:
    """How unlikely a literal is to appear in a healthy log: longer is rarer, and a lone
    lower-case word ('process', 'exitcode') is far more common than text with capitals,
    digits or punctuation ('Killed process ', ' (pid: '). Text made only of everyday log words
    and English function words (' out of memory') ranks low whatever its length: an identifier
    such as 'cudaMalloc' is the better anchor for a line that holds both."""
    core = run.strip()
    score = float(len(core))
    if _PLAIN_WORD.fullmatch(run):
        score -= 6
    words = re.findall(r"[A-Za-z]+", core)
    if words and all(_everyday(w) for w in words) and not re.search(r"[^A-Za-z\s]", core):
        score -= 8  # nothing but everyday words, such as NCCL INFO or ' out of memory'
    if any(ch.isupper() or ch.isdigit() for ch in core):
        score += 2
    if any(not ch.isalnum() and not ch.isspace() for ch in core):
        score += 2
    return score


def _alternatives_literals(alternatives: list) -> list[str] | None:
    """For a BRANCH, the best literal of each alternative, or None if one has none."""
    out: list[str] = []
    for alt in alternatives:
        lits = _prefilter(list(alt))
        if not lits:
            return None
        out.extend(lits)
    return out


def _prefilter(items: list) -> list[str]:
    return _choose(*_scan(items))


def _choose(runs: list[str], branches: list[list[str]]) -> list[str]:
    """The prefilter literals from a scan: the rarest long run, else a usable alternation.

    A long run that is only an everyday log word ('loss' in ``loss(?:: nan| = nan)``, 'failed
    to ' in ``failed to (?:register CUDA shared memory|open CUDA IPC handle)``) would make
    every ordinary line that holds it a candidate; a required alternation whose every
    alternative is rarer is used instead."""
    long_runs = [r for r in runs if long_enough(r)]
    usable = [b for b in branches if all(long_enough(x) for x in b)]
    if long_runs:
        best = max(long_runs, key=rarity)
        if usable and (rarity(best) < 0 or everyday_words(best) is not None):
            alternation = max(usable, key=lambda b: min(rarity(x) for x in b))
            if min(rarity(x) for x in alternation) > rarity(best):
                return alternation
        return [best]
    if usable:
        return min(usable, key=len)
    best = max(runs, key=len) if runs else ""
    return [best] if best.strip() else []


def prefilter_literals(pattern: str) -> tuple[list[str], bool]:
    lits, ignore_case = _prefilter_literals(pattern)
    return list(lits), ignore_case


@functools.lru_cache(maxsize=CACHED)
def _prefilter_literals(pattern: str) -> tuple[tuple[str, ...], bool]:
    """Literals of which every match contains at least one, and the ignore-case flag.

    A single long required run when the pattern has one; otherwise the alternatives of a
    required alternation (``A|B`` gives the best literal of A and of B). Lower-cased when
    the pattern ignores case. An empty or short result means the pattern cannot be
    prefiltered (validation refuses such patterns).
    """
    runs, branches, ignore_case = _scan_pattern(pattern)
    lits = _choose(runs, branches)
    return tuple(x.lower() for x in lits) if ignore_case else tuple(lits), ignore_case


_EVERYDAY_FOLDED = frozenset(w.lower() for w in COMMON_WORDS) | FUNCTION_WORDS
_WORDS = re.compile(r"[A-Za-z]{2,}")  # a lone letter ('x', the 's' of 'it/s') names nothing


def everyday_words(literal: str) -> list[str] | None:
    """The words of ``literal`` that are not English function words, when every word it holds
    is an everyday log word (``COMMON_WORDS``) or a function word, in any case ('error',
    'Failed to ', ': out of memory', 'NCCL INFO '); None when it holds a word of its own
    ('cudaMalloc', 'Xid', 'posix_fallocate'). Digits and punctuation are no words: ' -> 6' gives []."""
    words = _WORDS.findall(literal)
    if any(w.lower() not in _EVERYDAY_FOLDED for w in words):
        return None
    return [w for w in words if w.lower() not in FUNCTION_WORDS]


def names_its_own(pattern: str, rare: Callable[[str, bool], bool]) -> tuple[bool, list[str], bool]:
    """Whether every match of ``pattern`` contains a literal that ``rare`` accepts (a required
    run long enough to scan for, or one in each alternative of a required alternation, at any
    depth), the literals it refused on the way, and whether the pattern ignores case (then the
    literals are lower-cased, and ``rare`` is told so).

    This judges the pattern, not the one gate ``prefilter_literals`` picks: in
    ``failed to (?:extend /dev/shm/|create shared memory file)`` the alternation names the fault
    even though the prefilter scans for 'failed to '."""
    tree = parse(pattern)
    ignore_case = bool(tree.state.flags & re.IGNORECASE)
    refused: list[str] = []

    def judge(run: str) -> bool:
        if not long_enough(run):
            return False
        text = run.lower() if ignore_case else run
        if rare(text, ignore_case):
            return True
        if text not in refused:
            refused.append(text)
        return False

    def walk(items: list) -> bool:
        for op, av in _parts(items):
            if op is RUN:
                if judge(av):
                    return True
            elif op is C.BRANCH:
                if all([walk(list(alt)) for alt in av[1]]):  # a list: every alternative's literals are listed
                    return True
            elif (body := _required_body(op, av)) is not None and walk(body):
                return True
        return False

    return walk(list(tree)), refused, ignore_case
