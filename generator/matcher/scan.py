"""Find the lines of a chunk that may match: a literal prefilter over the whole buffer.

For each anchor literal the scanner runs ``bytes.find`` over the chunk (a C loop, several
GB/s) and records the line around every occurrence. Only those candidate lines are decoded
and tested with regular expressions. The cost is one pass per anchor, which is why the
rules keep the anchor set small. Case-insensitive anchors are searched in a lower-cased
copy of the chunk, made only when there are such anchors.

Any object with the same ``candidate_lines`` method can replace this scanner (the CLI
plugs in an RE2-based one when google-re2 is installed).
"""

from __future__ import annotations

from typing import Iterable, Protocol


class Scanner(Protocol):
    def candidate_lines(self, data: bytes) -> list[tuple[int, int]]:
        """Sorted, distinct (start, end) byte offsets of lines that may match (end excludes LF)."""


class LiteralScanner:
    def __init__(self, anchors: Iterable[tuple[str, bool]]):
        unique = dict.fromkeys((text.lower() if ci else text, ci) for text, ci in anchors if text)
        self.exact = [t.encode() for t, ci in unique if not ci]
        self.folded = [t.encode() for t, ci in unique if ci]

    def candidate_lines(self, data: bytes) -> list[tuple[int, int]]:
        found: dict[int, int] = {}
        for buf, literals in ((data, self.exact), (data.lower() if self.folded else b"", self.folded)):
            find = buf.find
            for lit in literals:
                pos = find(lit)
                while pos >= 0:
                    start = data.rfind(b"\n", 0, pos) + 1
                    if start not in found:
                        end = data.find(b"\n", pos)
                        found[start] = len(data) if end < 0 else end
                        pos = find(lit, found[start])
                    else:
                        pos = find(lit, found[start])
        return sorted(found.items())
