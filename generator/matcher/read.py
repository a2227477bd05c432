"""Read a log of any size and content as line-aligned byte chunks, in constant memory.

Whatever the bytes are, reading never fails: NUL bytes and ANSI colour or cursor codes are
removed, carriage returns are left for the matcher (it splits lines on them), invalid
UTF-8 is left for the decoder to replace. A line longer
than ``MAX_LINE_BYTES`` is cut for matching (the rest of it is skipped, not kept), so one
huge line cannot exhaust memory; the matcher also looks at no more than that much of any
line. Line numbers count LF-terminated lines from 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import BinaryIO, Iterator

CHUNK_BYTES = 1 << 20
MAX_LINE_BYTES = 64 * 1024

_ANSI = re.compile(rb"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[@-Z\\-_])")


@dataclass
class Chunk:
    """Complete lines of the input: ``data`` ends with LF (except possibly at end of input)."""

    data: bytes
    first_line: int  # number of the first line in ``data``


@dataclass
class InputStats:
    lines: int = 0
    bytes: int = 0
    cut_lines: int = 0  # lines longer than MAX_LINE_BYTES, cut for matching


def clean(data: bytes) -> bytes:
    """Remove what is not log text: NUL bytes and ANSI escape sequences.

    CR is left in place: the matcher splits lines on it (progress bars redraw with bare CR,
    Windows lines end in CR LF), which handles both without copying the whole chunk.
    """
    if b"\x00" in data:
        data = data.replace(b"\x00", b"")
    if b"\x1b" in data:
        data = _ANSI.sub(b"", data)
    return data


class ChunkReader:
    """Turns blocks of bytes, as they arrive, into cleaned line-aligned chunks.

    Used by ``chunks`` for files and by the browser, which receives a file piece by piece.
    Memory stays bounded: at most one partial line (never more than MAX_LINE_BYTES) is kept.
    """

    def __init__(self, stats: InputStats):
        self.stats = stats
        self.line = 1
        self.carry = b""
        self.skipping = False  # inside an over-long line whose head was already emitted

    def feed(self, block: bytes) -> list[Chunk]:
        out: list[Chunk] = []
        if not block:
            return out
        self.stats.bytes += len(block)
        if self.skipping:
            nl = block.find(b"\n")
            if nl < 0:
                return out
            block = block[nl + 1:]
            self.skipping = False
        data = self.carry + block if self.carry else block
        cut = data.rfind(b"\n")
        if cut < 0:
            self.carry = data
        else:
            body, self.carry = data[: cut + 1], data[cut + 1:]
            body = clean(body)
            out.append(Chunk(body, self.line))
            self.line += body.count(b"\n")
        if len(self.carry) > MAX_LINE_BYTES:  # a line longer than the limit: keep its head only
            self.stats.cut_lines += 1
            out.append(Chunk(clean(self.carry[:MAX_LINE_BYTES]) + b"\n", self.line))
            self.line += 1
            self.carry = b""
            self.skipping = True
        return out

    def close(self) -> list[Chunk]:
        out: list[Chunk] = []
        if self.carry:
            out.append(Chunk(clean(self.carry), self.line))
            self.line += 1
            self.carry = b""
        self.stats.lines = self.line - 1
        return out


def chunks(stream: BinaryIO, stats: InputStats, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Chunk]:
    """Yield cleaned, line-aligned chunks of ``stream``; update ``stats`` as it goes."""
    reader = ChunkReader(stats)
    while True:
        block = stream.read(chunk_bytes)
        if not block:
            break
        yield from reader.feed(block)
    yield from reader.close()
