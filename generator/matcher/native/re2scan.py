"""An RE2-based scanner for the CLI: all anchors in one linear-time pass over each chunk.

google-re2 compiles the anchor literals into one automaton, so the cost no longer grows
with the number of anchors. It is optional: without the package the matcher's pure-Python
scanner is used, and the browser always uses that one (Pyodide has no RE2).
"""

from __future__ import annotations

import re

try:  # optional dependency
    import re2  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - exercised when google-re2 is absent
    re2 = None


def available() -> bool:
    return re2 is not None


class Re2Scanner:
    """Candidate lines are those where a signature pattern really matches (or an anchor
    of the matcher's own parsers appears), found by one RE2 pass over the chunk."""

    def __init__(self, patterns: list[tuple[str, bool, list[str]]], anchors: list[str]):
        if re2 is None:
            raise RuntimeError("google-re2 is not installed")
        options = re2.Options()
        options.max_mem = 256 << 20
        parts: list[bytes] = []
        for pattern, ignore_case, literals in patterns:
            body = _segment_anchors(pattern.removeprefix("(?i)"))
            part = ("(?i:" if ignore_case else "(?:") + body + ")"
            try:
                re2.compile(part.encode(), options)
                parts.append(part.encode())
            except Exception:  # RE2 lacks a construct: fall back to the literals, still exact after verification
                parts.extend(_literal(lit, ignore_case) for lit in literals)
        parts.extend(_literal(text, False) for text in anchors)
        # (?m): ^ and $ match at line boundaries, as they do when Python searches one line
        self._rx = re2.compile(b"(?m)" + (b"|".join(parts) or rb"\b\B"), options)  # \b\B never matches
        self._find = self._spans()

    @classmethod
    def for_matcher(cls, matcher) -> "Re2Scanner":  # noqa: ANN001 - generator.matcher.match.Matcher
        return cls(matcher.patterns, [a["text"] for a in matcher.rules["anchors"] if a.get("builtin")])

    def candidate_lines(self, data: bytes) -> list[tuple[int, int, None]]:
        out: list[tuple[int, int, None]] = []
        size = len(data)
        find = self._find
        pos = 0
        while pos < size:
            span = find(data, pos, size)
            if span is None:
                break
            start = data.rfind(b"\n", 0, span[0]) + 1
            end = data.find(b"\n", span[1])
            end = size if end < 0 else end
            out.append((start, end, None))  # found by the full patterns: no anchor hint
            pos = end + 1
        return out

    def _spans(self):  # noqa: ANN202
        """The (start, end) of the next match from ``pos``, or None.

        google-re2's ``search`` wraps each call in a generator that maps offsets for str input;
        on bytes the compiled regexp's own Match call gives the same span for a fraction of the
        cost, which matters when nearly every line matches. Falls back to ``search``."""
        regexp = getattr(self._rx, "_regexp", None)
        anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
        if regexp is None or anchor is None or not hasattr(regexp, "Match"):
            search = self._rx.search

            def slow(data: bytes, pos: int, size: int) -> tuple[int, int] | None:
                m = search(data, pos)
                return None if m is None else (m.start(), m.end())
            return slow
        match = regexp.Match

        def fast(data: bytes, pos: int, size: int) -> tuple[int, int] | None:
            span = match(anchor, data, pos, size)[0]
            return None if span[0] < 0 else span
        return fast


def _segment_anchors(pattern: str) -> str:
    """Let ^ and $ also match next to a bare CR.

    The matcher splits progress-bar lines on CR and searches each segment, so ^ and $ can
    match around a CR there; RE2 scans whole lines, so it is told the same. Anchors inside
    character classes and escaped ones are left alone.
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                out.append("[^")
                i += 2
                continue
            out.append(ch)
        elif ch == "^":
            out.append("(?:^|\r)")
        elif ch == "$":
            out.append("(?:$|\r)")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _literal(text: str, ignore_case: bool) -> bytes:
    escaped = re.escape(text).encode()
    return b"(?i:" + escaped + b")" if ignore_case else escaped
