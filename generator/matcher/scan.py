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


# Texts the job's readers look for in a whole chunk before they look closer: a kernel line that
# reveals the boot time, a py-spy dump, a Horovod stall report. A scanner that scans in the
# background (``submit``) reports those it saw with its result; otherwise each is searched for
# with ``in``, one pass over the chunk apiece (Matcher.scan_soon).
MARKERS = (b"kernel: [", b'"MainThread"', b" ranks: ")


class Scanner(Protocol):
    def candidate_lines(self, data: bytes) -> list[tuple[int, int, frozenset[int] | None]]:
        """Sorted, distinct lines that may match: (start, end, anchors found on the line).

        ``end`` excludes the LF. The third item names the anchors (by index) seen on the
        line, so only their signatures need checking; None means "check everything". A
        scanner whose ``names_signatures`` is true names the signatures themselves instead.
        """


class LiteralScanner:
    def __init__(self, anchors: Iterable[tuple[str, bool]]):
        self.exact: list[tuple[bytes, int]] = []
        self.folded: list[tuple[bytes, int]] = []
        for index, (text, ci) in enumerate(anchors):
            if text:
                (self.folded if ci else self.exact).append(((text.lower() if ci else text).encode(), index))

    def candidate_lines(self, data: bytes) -> list[tuple[int, int, frozenset[int] | None]]:
        ends: dict[int, int] = {}
        seen: dict[int, set[int]] = {}
        for buf, literals in ((data, self.exact), (data.lower() if self.folded else b"", self.folded)):
            find = buf.find
            for lit, index in literals:
                pos = find(lit)
                while pos >= 0:
                    start = data.rfind(b"\n", 0, pos) + 1
                    end = ends.get(start)
                    if end is None:
                        end = data.find(b"\n", pos)
                        end = ends[start] = len(data) if end < 0 else end
                        seen[start] = {index}
                    else:
                        seen[start].add(index)
                    pos = find(lit, end)
        return [(start, ends[start], frozenset(seen[start])) for start in sorted(ends)]
