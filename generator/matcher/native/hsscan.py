"""A Hyperscan scanner for the CLI: every signature and anchor in one pass over each chunk.

Hyperscan (the ``hyperscan`` package on PyPI, a binding of Intel's library) compiles all the
patterns into one automaton and reports where each matches, at several hundred MB/s. Like the
RE2 scanner it only finds candidate lines: the matcher then runs the real Python patterns on
them, so every engine gives the same report (a parity test holds it). A pattern Hyperscan
cannot compile is replaced by its required literals, still exact after verification. Optional:
``--engine auto`` uses it when installed, then RE2, then the pure-Python scanner.
"""

from __future__ import annotations

import re

from .re2scan import _segment_anchors

try:  # optional dependency
    import hyperscan  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - exercised when hyperscan is absent
    hyperscan = None


def available() -> bool:
    return hyperscan is not None


# Constructs whose meaning on bytes differs from Python's on text: `.` and negated classes take
# one byte where Python takes one character (a curly quote is three bytes), \w \s \d \b are
# ASCII-only on bytes. Patterns with them are prefiltered by their literals instead; Hyperscan's
# UTF-8 mode would fix the meaning but takes minutes to compile this many patterns.
_NOT_BYTE_SAFE = re.compile(r"(?<!\\)(?:\\\\)*(?:\.|\[\^|\\[wWsSdDbB])")


def _byte_safe(pattern: str) -> bool:
    return not _NOT_BYTE_SAFE.search(pattern)


def _compile(items: list[tuple[bytes, int]]):  # noqa: ANN202 - a hyperscan.Database
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[e for e, _ in items], ids=list(range(len(items))), elements=len(items), flags=[f for _, f in items])
    return db


class HyperscanScanner:
    """Candidate lines: where a signature really matches, or an anchor of the matcher's own parsers appears."""

    def __init__(self, patterns: list[tuple[str, bool, list[str]]], anchors: list[str]):
        if hyperscan is None:
            raise RuntimeError("hyperscan is not installed")
        # UTF-8 and Unicode classes: `.` and `\w` mean a character, as in the Python patterns
        base = hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY | hyperscan.HS_FLAG_UTF8
        wanted: list[tuple[bytes, int, list[bytes]]] = []  # expression, flags, literals to use instead
        for pattern, ignore_case, literals in patterns:
            flag = base | (hyperscan.HS_FLAG_CASELESS if ignore_case else 0)
            lits = [re.escape(lit).encode() for lit in literals]
            if _byte_safe(pattern):
                wanted.append((_segment_anchors(pattern.removeprefix("(?i)")).encode(), flag, lits))
            else:  # its required literals: a superset of its lines, made exact by the matcher's verification
                wanted.extend((lit, flag, []) for lit in lits)
        wanted.extend((re.escape(text).encode(), base, []) for text in anchors)
        try:  # all at once (fast); one pattern Hyperscan lacks sends us to compiling them one by one
            self.db = _compile([(e, f) for e, f, _ in wanted] or [(rb"\b\B", base)])
        except Exception:  # noqa: BLE001 - hyperscan.error and friends
            usable: list[tuple[bytes, int]] = []
            for expr, flag, literals in wanted:
                try:
                    _compile([(expr, flag)])
                    usable.append((expr, flag))
                except Exception:  # noqa: BLE001
                    usable.extend((lit, flag) for lit in literals)  # still exact after the matcher's verification
            self.db = _compile(usable or [(rb"\b\B", base)])

    @classmethod
    def for_matcher(cls, matcher) -> "HyperscanScanner":  # noqa: ANN001 - generator.matcher.match.Matcher
        return cls(matcher.patterns, [a["text"] for a in matcher.rules["anchors"] if a.get("builtin")])

    def candidate_lines(self, data: bytes) -> list[tuple[int, int, None]]:
        ends: list[int] = []
        self.db.scan(data, match_event_handler=lambda _id, _start, end, _flags, _ctx: ends.append(end))
        if not ends:
            return []
        out: list[tuple[int, int, None]] = []
        size = len(data)
        last_end = -1
        for at in sorted(ends):
            if at <= last_end:
                continue  # the same line as the last one
            start = data.rfind(b"\n", 0, max(at - 1, 0)) + 1 if at else 0
            end = data.find(b"\n", max(at - 1, 0))
            end = size if end < 0 else end
            if start <= last_end:
                continue
            out.append((start, end, None))
            last_end = end
        return out
