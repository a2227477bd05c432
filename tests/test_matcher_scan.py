"""The literal scanner (generator/matcher/scan.py): the lines it names are exactly the lines
that contain an anchor, with the token gate or without it, and the gate spares the chunk-wide
search for anchors that cannot be in the chunk."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.matcher.scan import LiteralScanner, _tokens_text


def reference(anchors: list[tuple[str, bool]], data: bytes) -> list[tuple[int, int, frozenset[int]]]:
    """Line by line, which anchors each line contains: the scanner's contract, spelt out."""
    found = []
    start = 0
    for line in data.split(b"\n"):
        end = start + len(line)
        hit = frozenset(i for i, (text, ci) in enumerate(anchors)
                        if text and (text.lower().encode() in line.lower() if ci else text.encode() in line))
        if hit:
            found.append((start, end, hit))
        start = end + 1
    return found


_ALPHABET = "ab Ab\tc:"  # few letters and blanks: anchors and chunks collide often
_anchor = st.tuples(st.text(_ALPHABET, min_size=1, max_size=6), st.booleans())


@settings(max_examples=300)
@given(st.lists(_anchor, min_size=1, max_size=6), st.lists(st.text(_ALPHABET + "\r\x0b", max_size=30), max_size=40))
def test_candidate_lines_are_the_lines_that_contain_an_anchor(anchors: list[tuple[str, bool]], lines: list[str]) -> None:
    data = "\n".join(lines).encode()
    assert LiteralScanner(anchors).candidate_lines(data) == reference(anchors, data)


def test_repetitive_chunk_is_gated_and_the_result_is_unchanged() -> None:
    """A log repeats a few hundred distinct tokens: an anchor with a piece that is in no token
    is never searched in the chunk, an anchor whose pieces are all there still is."""
    calls: list[bytes] = []

    class Counted(bytes):
        def find(self, sub, *args):  # noqa: ANN001, ANN002
            calls.append(bytes(sub))
            return super().find(sub, *args)

    lines = [f"2026-12-01T10:00:{i % 60:02d} worker-{i % 7} step {i % 50} loss 0.{i % 9}" for i in range(3000)]
    lines[1234] = "2026-12-01T10:20:34 worker-3 NCCL WARN Call to connect returned Connection refused"
    data = Counted("\n".join(lines).encode())
    anchors = [("Connection refused", False), ("CUDA error: out of memory", False), ("ncclRemoteError", False)]
    assert _tokens_text(data) is not None
    result = LiteralScanner(anchors).candidate_lines(data)
    assert [(data[s:e].decode(), sorted(a)) for s, e, a in result] == [(lines[1234], [0])]
    searched = {c for c in calls if c in {a.encode() for a, _ in anchors}}
    assert searched == {b"Connection refused"}  # the two absent anchors cost no pass over the chunk


def test_gate_is_skipped_when_tokens_are_mostly_distinct() -> None:
    """Random-looking text (hashes, base64) has no repetition to exploit: the scanner searches
    every anchor, as before the gate, instead of paying for a token text as large as the chunk."""
    distinct = b"\n".join(b"%032x" % (i * 2654435761 % (1 << 127)) for i in range(5000))
    repetitive = b"\n".join(b"step 1 loss 0.5 lr 0.001" for _ in range(5000))
    assert _tokens_text(distinct) is None
    text = _tokens_text(repetitive)
    assert text is not None and set(text.split(b"\n")) == {b"step", b"1", b"loss", b"0.5", b"lr", b"0.001"}
