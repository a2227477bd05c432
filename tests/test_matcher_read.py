"""Reading logs: any bytes, CRLF and bare CR, ANSI, NUL, long lines, chunk boundaries."""

from __future__ import annotations

import io

from generator.matcher.read import MAX_LINE_BYTES, InputStats, chunks, clean


def _read(data: bytes, chunk_bytes: int = 1 << 20) -> tuple[list[tuple[int, bytes]], InputStats]:
    stats = InputStats()
    lines = []
    for chunk in chunks(io.BytesIO(data), stats, chunk_bytes):
        for i, line in enumerate(chunk.data.split(b"\n")[:-1] if chunk.data.endswith(b"\n") else chunk.data.split(b"\n")):
            lines.append((chunk.first_line + i, line))
    return lines, stats


def test_clean_removes_ansi_and_nul_and_keeps_line_ends() -> None:
    assert clean(b"\x1b[31mred\x1b[0m\x00 ok\r\n") == b"red ok\r\n"
    assert clean(b"\x1b]0;title\x07text\n") == b"text\n"


def test_line_numbers_survive_small_chunks() -> None:
    data = b"".join(b"line %d\n" % i for i in range(1, 101))
    lines, stats = _read(data, chunk_bytes=7)
    assert stats.lines == 100 and stats.bytes == len(data)
    assert lines[41] == (42, b"line 42")


def test_last_line_without_newline_counts() -> None:
    lines, stats = _read(b"a\nb\nc")
    assert stats.lines == 3 and lines[-1] == (3, b"c")


def test_over_long_line_is_cut_not_kept() -> None:
    data = b"first\n" + b"x" * (3 * MAX_LINE_BYTES) + b"\nlast\n"
    lines, stats = _read(data, chunk_bytes=4096)
    assert stats.cut_lines == 1 and stats.lines == 3
    assert [n for n, _ in lines] == [1, 2, 3]
    assert len(lines[1][1]) == MAX_LINE_BYTES and lines[2] == (3, b"last")


def test_empty_input() -> None:
    lines, stats = _read(b"")
    assert lines == [] and stats.lines == 0 and stats.bytes == 0
