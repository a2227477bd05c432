"""Find the lines of a chunk that may match: a literal prefilter over the whole buffer.

For each anchor literal the scanner runs ``bytes.find`` over the chunk (a C loop, several
GB/s) and records the line around every occurrence. Only those candidate lines are decoded
and tested with regular expressions. The cost was one pass per anchor over the chunk; with
two thousand signatures most of that time went to anchors that do not occur at all. So
each chunk is first reduced to its distinct whitespace-separated tokens, joined into one
much smaller text (on real logs a tenth of the chunk or less), and an anchor is searched in
the chunk only if every whitespace-free piece of it occurs in that text. The gate is exact:
an anchor that occurs in the chunk has each of its pieces inside some token of the chunk.
A chunk whose tokens are mostly distinct (the reduced text over a quarter of the chunk)
skips the gate. Case-insensitive anchors are searched in a lower-cased copy of the chunk,
made only when there are such anchors.

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


GATE_MAX_SHARE = 4  # the token gate is skipped when the distinct tokens exceed 1/4 of the chunk


def _pieces(literal: bytes) -> tuple[bytes, ...]:
    """The whitespace-free pieces of an anchor, longest (most selective) first."""
    return tuple(sorted(literal.split(), key=len, reverse=True))


def _tokens_text(buf: bytes) -> bytes | None:
    """The distinct whitespace-separated tokens of ``buf`` joined by newlines, or None when
    that text is not much smaller than ``buf`` (the gate would cost more than it saves)."""
    text = b"\n".join(set(buf.split()))
    return text if len(text) * GATE_MAX_SHARE <= len(buf) else None


class LiteralScanner:
    def __init__(self, anchors: Iterable[tuple[str, bool]]):
        self.exact: list[tuple[bytes, int, tuple[bytes, ...]]] = []
        self.folded: list[tuple[bytes, int, tuple[bytes, ...]]] = []
        for index, (text, ci) in enumerate(anchors):
            if text:
                literal = (text.lower() if ci else text).encode()
                (self.folded if ci else self.exact).append((literal, index, _pieces(literal)))

    def candidate_lines(self, data: bytes) -> list[tuple[int, int, frozenset[int] | None]]:
        ends: dict[int, int] = {}
        seen: dict[int, set[int]] = {}
        tokens = _tokens_text(data)  # lower-casing keeps lengths and whitespace: it serves the folded copy too
        for buf, literals, gate in ((data, self.exact, tokens),
                                    (data.lower() if self.folded else b"", self.folded, tokens and tokens.lower())):
            if not literals:
                continue
            find = buf.find
            in_tokens = gate.find if gate is not None else None
            for lit, index, pieces in literals:
                if in_tokens is not None and not all(in_tokens(piece) >= 0 for piece in pieces):
                    continue  # a piece occurs in no token: the anchor is not in this chunk
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
