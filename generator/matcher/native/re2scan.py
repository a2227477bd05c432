"""An RE2-based scanner for the CLI: every signature pattern in a few linear-time passes over each chunk.

google-re2 compiles the patterns into one automaton per group (a group as large as RE2's DFA
can hold), so the cost grows with the number of groups, not with the number of patterns. It is
optional: without the package the matcher's pure-Python scanner is used, and the browser
always uses that one (Pyodide has no RE2).
"""

from __future__ import annotations

import re

try:  # optional dependency
    import re2  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - exercised when google-re2 is absent
    re2 = None


# the compiled program size (RE2 instructions) of one group of patterns scanned in one pass:
# 1,734 signatures in one alternation (574 k instructions) overflowed the DFA's 256 MiB and
# made the scan ~30 times slower; groups of this size stay in the DFA
GROUP_PROGRAM_SIZE = 200_000


def available() -> bool:
    return re2 is not None


class Re2Scanner:
    """Candidate lines are those where a signature pattern really matches (or an anchor
    of the matcher's own parsers appears), found by one RE2 pass per group of patterns."""

    def __init__(self, patterns: list[tuple[str, bool, list[str]]], anchors: list[str]):
        if re2 is None:
            raise RuntimeError("google-re2 is not installed")
        options = group_options()
        groups = group_parts(pattern_parts(patterns, anchors, options), GROUP_PROGRAM_SIZE)
        self.group_count = len(groups)
        # (?m): ^ and $ match at line boundaries, as they do when Python searches one line
        self._finds = [_spans(re2.compile(b"(?m)" + (b"|".join(g) or rb"\b\B"), options)) for g in groups]  # \b\B never matches

    @classmethod
    def for_matcher(cls, matcher) -> "Re2Scanner":  # noqa: ANN001 - generator.matcher.match.Matcher
        return cls(matcher.patterns, [a["text"] for a in matcher.rules["anchors"] if a.get("builtin")])

    def candidate_lines(self, data: bytes) -> list[tuple[int, int, None]]:
        lines: dict[int, int] = {}  # start -> end of every line some group matched
        size = len(data)
        for find in self._finds:
            pos = 0
            while pos < size:
                span = find(data, pos, size)
                if span is None:
                    break
                start = data.rfind(b"\n", 0, span[0]) + 1
                end = data.find(b"\n", span[1])
                end = size if end < 0 else end
                # RE2 scans the whole chunk, so a pattern's \s can run over a newline (`^\s*X` from a
                # blank line above); the matcher verifies one line at a time: each line is a candidate
                while (cut := data.find(b"\n", start, end)) >= 0:
                    lines[start] = cut
                    start = cut + 1
                lines[start] = end
                pos = end + 1
        # in file order, found by the full patterns: no anchor hint
        return [(start, lines[start], None) for start in sorted(lines)]


def group_options():  # noqa: ANN201 - re2.Options
    """The RE2 options each group is compiled with: the memory its automaton may use."""
    options = re2.Options()
    options.max_mem = 256 << 20
    return options


def pattern_parts(patterns: list[tuple[str, bool, list[str]]], anchors: list[str], options=None) -> list[tuple[bytes, int]]:  # noqa: ANN001
    """Each signature pattern as an RE2 alternative, with its compiled program size; then the
    parsers' anchors as literals. A pattern RE2 cannot compile is replaced by its literals (still
    exact: every candidate line is verified by the matcher's own patterns)."""
    options = options or group_options()
    parts: list[tuple[bytes, int]] = []  # (regexp text, its compiled program size)
    for pattern, ignore_case, literals in patterns:
        body = _segment_anchors(pattern.removeprefix("(?i)"))
        part = ("(?i:" if ignore_case else "(?:") + body + ")"
        try:
            compiled = re2.compile(part.encode(), options)
            parts.append((part.encode(), getattr(compiled, "programsize", len(part))))
        except Exception:  # RE2 lacks a construct: fall back to the literals, still exact after verification
            parts.extend((_literal(lit, ignore_case), len(lit)) for lit in literals)
    parts.extend((_literal(text, False), len(text)) for text in anchors)
    return parts


def group_parts(parts: list[tuple[bytes, int]], limit: int) -> list[list[bytes]]:
    """Cut the alternatives into groups of at most ``limit`` program size, in order.

    One alternation of every pattern is the fastest pass while RE2's DFA can hold it; past a
    few hundred thousand instructions the DFA runs out of memory and RE2 falls back to a scan
    tens of times slower. So the patterns are cut into groups of bounded size, each scanned in
    its own linear pass (a single part larger than the limit gets a group of its own)."""
    groups: list[list[bytes]] = [[]]
    size = 0
    for text, cost in parts:
        if groups[-1] and size + cost > limit:
            groups.append([])
            size = 0
        groups[-1].append(text)
        size += cost
    return groups


def _spans(rx):  # noqa: ANN001, ANN202
    """For a compiled regexp: a function giving the (start, end) of its next match from ``pos``, or None.

    google-re2's ``search`` wraps each call in a generator that maps offsets for str input;
    on bytes the compiled regexp's own Match call gives the same span for a fraction of the
    cost, which matters when nearly every line matches. Falls back to ``search``."""
    regexp = getattr(rx, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if regexp is None or anchor is None or not hasattr(regexp, "Match"):
        search = rx.search

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
