"""Reading logs: any bytes, CRLF and bare CR, ANSI, NUL, long lines, chunk boundaries."""

from __future__ import annotations

import io

import pytest

from generator.matcher.read import MAX_LINE_BYTES, SNIFF_BYTES, InputStats, chunks, clean


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


def test_clean_removes_the_character_set_escape_that_ends_a_tput_colour() -> None:
    """tput sgr0 prints `ESC ( B` before `ESC [ m`; the nF escape was left in the text as
    `(B`, so an anchored signature missed a coloured log's line."""
    coloured = b"\x1b[1m\x1b[31mERROR:\x1b(B\x1b[m NCCL error\x1b)0 in\x1b #8 op\n"
    assert clean(coloured) == b"ERROR: NCCL error in op\n"
    assert clean(b"a\x1bMb\n") == b"ab\n"  # a one-byte Fe escape (ESC M) as before


def test_clean_reads_a_run_of_backslashes_as_one() -> None:
    # three levels of Go/JSON quoting (runc in containerd in Docker) put 7 backslashes before a quote
    nested = rb'exec: \\\\\\\"nvidia-container-cli\\\\\\\": executable file not found in $PATH\\\\n\\\"' + b"\n"
    assert clean(nested) == rb'exec: \"nvidia-container-cli\": executable file not found in $PATH\n\"' + b"\n"
    assert clean(rb"C:\\Users\\me\\torch\\lib") == rb"C:\Users\me\torch\lib"
    assert clean(rb"one \" level") == rb"one \" level"  # a single backslash is left as it is


def test_clean_reads_typographic_quotes_as_plain_ones() -> None:
    """gcc in a UTF-8 locale quotes with ‘…’, forums and editors turn "…" into “…”: both are read as
    the plain quotes signatures are written with; other characters of the same lead bytes stay."""
    posted = "docker: Error response from daemon: could not select device driver “” with capabilities: [[gpu]].\n"
    assert clean(posted.encode()) == b'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    gcc = "/usr/lib/libstdc++.so.6: version ‘GLIBCXX_3.4.30’ not found — see ‘ldd’…"
    assert clean(gcc.encode()).decode() == "/usr/lib/libstdc++.so.6: version 'GLIBCXX_3.4.30' not found — see 'ldd'…"


def test_clean_reads_wide_and_no_break_spaces_as_plain_ones_and_drops_zero_width_ones() -> None:
    """A log copied from a rendered page, a chat client or a word processor carries U+00A0 (and
    thin, en, ideographic spaces) between words, and zero-width characters inside them."""
    posted = "RuntimeError:\u00a0CUDA\u00a0error:\u2009out of\u202fmemory\u3000(x)\u200b!\ufeff\n"
    assert clean(posted.encode()) == b"RuntimeError: CUDA error: out of memory (x)!\n"
    dashes = "a \u2010 b \u2014 c \u2026\n"  # same lead bytes, not spaces: kept
    assert clean(dashes.encode()).decode() == dashes


def test_every_character_the_paste_patterns_find_has_a_replacement() -> None:
    """clean() looks characters up by what its patterns matched: a byte form one finds and the
    table lacks would stop reading the log with a KeyError."""
    from generator.matcher.read import _PASTE_CHARS, _PASTE_E2, _PASTE_OTHER

    for lead in (b"\xe2\x80", b"\xe2\x81", b"\xe3\x80", b"\xef\xbb"):
        for last in range(0x80, 0xC0):
            char = lead + bytes([last])
            if _PASTE_E2.fullmatch(char) or _PASTE_OTHER.fullmatch(char):
                assert char in _PASTE_CHARS, char
    assert clean("\u2018a\u2019 \u201cb\u201d\u2003c\u200dd\n".encode()) == b"'a' \"b\" cd\n"


def test_clean_decodes_html_character_references_once_and_never_adds_a_line() -> None:
    page = b"could not select device driver &quot;&quot; with capabilities: [[gpu]] &lt;x&gt; &#39;a&#x27; &amp;lt;\n"
    assert clean(page) == b"could not select device driver \"\" with capabilities: [[gpu]] <x> 'a' &lt;\n"
    assert clean(b"one&#10;two&#0;three&#x85;four&nbsp;five&#55296;\n") == b"one two three four five \n"
    assert clean(b"a && b; c &unknown; d &#12345678;\n") == b"a && b; c &unknown; d &#12345678;\n"


def test_clean_removes_reply_quote_markers_at_a_line_start_only() -> None:
    quoted = b"> RuntimeError: NCCL error\n>> Killed\n> > nested\n>\nplain > kept\n=>> PBS: job killed\n"
    assert clean(quoted) == b"RuntimeError: NCCL error\nKilled\nnested\n\nplain > kept\n=>> PBS: job killed\n"
    assert clean(b"&gt; quoted in page source\n") == b"quoted in page source\n"


def test_line_numbers_survive_small_chunks() -> None:
    data = b"".join(b"line %d\n" % i for i in range(1, 101))
    lines, stats = _read(data, chunk_bytes=7)
    assert stats.lines == 100 and stats.bytes == len(data)
    assert lines[41] == (42, b"line 42")


def test_last_line_without_newline_counts() -> None:
    lines, stats = _read(b"a\nb\nc")
    assert stats.lines == 3 and lines[-1] == (3, b"c")


@pytest.mark.parametrize("chunk_bytes", [4096, 1 << 20])
def test_over_long_line_keeps_its_head_and_tail_only(chunk_bytes: int) -> None:
    data = b"first\n" + b"h" * MAX_LINE_BYTES + b"m" * MAX_LINE_BYTES + b"t" * MAX_LINE_BYTES + b"\nlast\n"
    lines, stats = _read(data, chunk_bytes=chunk_bytes)
    assert stats.cut_lines == 1 and stats.lines == 3
    assert [n for n, _ in lines] == [1, 2, 2, 3]  # head and tail keep the line's number
    assert lines[1][1] == b"h" * MAX_LINE_BYTES and lines[2][1] == b"t" * MAX_LINE_BYTES
    assert lines[3] == (3, b"last")


@pytest.mark.parametrize("chunk_bytes", [4096, 1 << 20])
def test_carriage_returns_split_a_long_line_before_any_cut(chunk_bytes: int) -> None:
    bar = b"".join(b"Epoch 1:  %3d%%|##########| %d/100000 [00:10<00:00]\r" % (i % 100, i) for i in range(5000))
    xid = b"[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."
    lines, stats = _read(b"before\n" + bar + xid + b"\nafter\n", chunk_bytes=chunk_bytes)
    assert len(bar) > 3 * MAX_LINE_BYTES and stats.cut_lines == 0 and stats.lines == 3
    assert all(len(text) <= MAX_LINE_BYTES for _, text in lines)
    assert {n for n, _ in lines} == {1, 2, 3}
    assert any(n == 2 and text.endswith(xid) for n, text in lines)


@pytest.mark.parametrize("chunk_bytes", [64, 4096, 1 << 20])
def test_lines_that_end_in_cr_alone_are_read_as_lines(chunk_bytes: int) -> None:
    """Red team s31: a serial console's capture (CR, no LF) was one line of CR segments, so 100
    Xid lines counted as one event, each with the first line's time. A CR LF that a block
    boundary splits is still one break."""
    xid = b"[ %d.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
    data = b"".join(xid % i + b"\r" for i in range(1, 1001)) + b"late\r\nlast"
    assert data.index(b"\n") > SNIFF_BYTES
    lines, stats = _read(data, chunk_bytes=chunk_bytes)
    assert stats.cr_lines == 1 and stats.lines == 1002 and stats.bytes == len(data)
    assert lines[41] == (42, xid % 42) and lines[-2:] == [(1001, b"late"), (1002, b"last")]
    short, stats = _read(b"".join(xid % i + b"\r" for i in range(1, 4)), chunk_bytes=chunk_bytes)
    assert stats.cr_lines == 1 and short == [(1, xid % 1), (2, xid % 2), (3, xid % 3)]


def test_progress_bars_and_floods_of_cr_are_not_cr_lines() -> None:
    """A log with LFs keeps CR as a segment break (progress-bar redraws on one line); so does a
    first piece that is mostly CRs (the bare-CR flood above); one CR is no line ending either."""
    bar = b"".join(b"Epoch 1: %3d%%|####| %d/100 [00:10<00:00]\r" % (i, i) for i in range(100))
    for data in (b"start\n" + bar + b"\ndone\n", bar + b"\ndone\n", b"\r" * 4096 + b"x\r", b"one line\r"):
        lines, stats = _read(data)
        assert stats.cr_lines == 0 and stats.lines == data.count(b"\n") + (not data.endswith(b"\n"))


def test_empty_input() -> None:
    lines, stats = _read(b"")
    assert lines == [] and stats.lines == 0 and stats.bytes == 0


def test_a_line_emptied_by_its_carriage_return_split_still_counts() -> None:
    """Found by fuzzing: a 64 KiB stretch, then only a CR, fed a byte at a time, was no line."""
    lines, stats = _read(b"x" * MAX_LINE_BYTES + b"\r", chunk_bytes=1)
    assert stats.lines == 1 and {n for n, _ in lines} == {1}


def test_a_line_holding_a_whole_escaped_log_reads_as_its_lines_under_its_own_number() -> None:
    """A termination message, a structured log's field or an exception's repr carries a log with
    its breaks escaped: the breaks read as CR (the matcher's segments), tabs and quotes plainly;
    a line with fewer than three escaped breaks (a record's trailing newline, a Windows path) is
    left as it is."""
    escaped = b'{"msg": "Traceback:\\n  File \\"t.py\\", line 3\\n\\tx()\\nRuntimeError: boom\\n"}\n'
    assert clean(escaped) == escaped[:-1] + b"\r" + b'{"msg": "Traceback:\r  File "t.py", line 3\r\tx()\rRuntimeError: boom\r"}\n'
    path = b"C:\\nvidia\\nvcc\\bin\\nvcc.exe not found\n"  # three breaks, each followed by a letter
    assert clean(path) == path
    record = b'{"log":"step 1 loss 0.2\\n","stream":"stderr"}\n'
    assert clean(record) == record
    stats = InputStats()
    got = list(chunks(io.BytesIO(b"first\n" + escaped + b"last\n"), stats))
    assert stats.lines == 3 and got[0].line_at(got[0].data.index(b"RuntimeError")) == 2


def test_an_exception_reported_as_type_and_message_lines_also_reads_as_one_line() -> None:
    """ComfyUI's error report (and Markdown summaries like it) gives an exception's type and its
    message on two lines of their own; the message line is followed, under its own number, by
    ``Type: message``, which is how the exception prints in a traceback (chengzeyi/Comfy-WaveSpeed#89)."""
    report = (b"## Error Details\n- **Node ID:** 42\n- **Exception Type:** torch._dynamo.exc.BackendCompilerFailed\n"
              b"- **Exception Message:** backend='inductor' raised:\n## Stack Trace\n")
    assert clean(report) == report.replace(b"raised:\n", b"raised:\rtorch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n")
    # rendered (no asterisks), the message in backticks, CRLF line ends
    rendered = b"Exception Type: torch.OutOfMemoryError\r\nException Message: `Allocation on device`\r\n"
    assert clean(rendered) == rendered[:-2] + b"\rtorch.OutOfMemoryError: Allocation on device\r\n"
    # quoted in a reply: the quote markers go first
    quoted = b"> - **Exception Type:** torch.OutOfMemoryError\n> - **Exception Message:** Allocation on device\n"
    assert clean(quoted) == b"- **Exception Type:** torch.OutOfMemoryError\n- **Exception Message:** Allocation on device\rtorch.OutOfMemoryError: Allocation on device\n"
    # a type line not followed by a message line, or prose naming the fields, is left alone
    for text in (b"- **Exception Type:** KeyError\n- **Node ID:** 7\n", b"The Exception Message: field is empty\n"):
        assert clean(text) == text
    lines, stats = _read(b"first\n" + report)
    assert stats.lines == 6 and [n for n, line in lines if b"BackendCompilerFailed: backend" in line] == [5]


def test_clean_reads_paste_characters_among_block_drawing_ones() -> None:
    """Progress bars draw with U+2588 and friends, which share the lead byte of the quotes and
    wide spaces: clean() must still replace those when both kinds fill a chunk."""
    bar = "\u2588" * 40 + "\u258f"
    text = f"Epoch 1: {bar}| 10/10\n\u201cCUDA out of memory\u201d\u2002at\u205fstep\u3000\ufeff1\n" * 3
    cleaned = clean(text.encode())
    assert cleaned.count("\u2588".encode()) == 120
    assert b'"CUDA out of memory" at step 1\n' in cleaned
    assert b"\xe2\x80" not in cleaned and b"\xe2\x81" not in cleaned and b"\xef\xbb\xbf" not in cleaned


def test_a_flood_of_bare_carriage_returns_is_read_a_piece_at_a_time() -> None:
    """Red team s24: 200 MB of bare CRs took 44 s, a Python step per (empty) CR segment."""
    import time

    started = time.perf_counter()
    lines, stats = _read(b"\r" * (32 << 20) + b"\nnext\n")
    assert time.perf_counter() - started < 1.5  # 5 s before
    assert stats.lines == 2 and stats.cut_lines == 0 and lines[-1] == (2, b"next")
    assert all(len(text) <= MAX_LINE_BYTES for _, text in lines)


@pytest.mark.parametrize("chunk_bytes", [4096, 1 << 20])
def test_a_segment_over_the_limit_between_carriage_returns_keeps_its_ends(chunk_bytes: int) -> None:
    long = b"h" * MAX_LINE_BYTES + b"m" * MAX_LINE_BYTES + b"t" * MAX_LINE_BYTES
    lines, stats = _read(b"\r" * 70_000 + long + b"\r\rafter\n", chunk_bytes=chunk_bytes)
    texts = [text for _, text in lines]
    assert stats.cut_lines == 1 and b"h" * MAX_LINE_BYTES in texts and b"t" * MAX_LINE_BYTES in texts
    assert texts[-1].endswith(b"after") and all(len(t) <= MAX_LINE_BYTES for t in texts)


def test_an_input_that_looks_binary_is_told_from_a_text_log() -> None:
    """Red team s29 (F10): a program read as 'No known failure found in 509 lines' with a lead
    made of its bytes. NULs alone do not make a log binary: a syslog keeps runs of them where a
    crash cut it short, UTF-16 text has one after every character."""
    from generator.matcher.read import looks_binary

    elf = b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 40 + b"GLIBC_2.34 not found\n"
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(7, 250)) * 30
    assert looks_binary(elf) and looks_binary(png) and looks_binary(b"\0" * 4096)
    colour = b"\x1b[31mRuntimeError: CUDA error: out of memory\x1b[0m\r\n\tat step 12\x0c\n" * 50
    padded = b"Nov  5 kernel: eth0 up\n" * 200 + b"\0" * 6000 + b"Nov  5 kernel: NVRM: Xid 79\n"
    utf16 = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n".encode("utf-16") * 20
    typographic = ("“quoted” — caf\u00e9 \u2588\u2588\u2588 100%\n" * 100).encode()
    assert not any(looks_binary(x) for x in (colour, padded, utf16, typographic, b"short\0\0"))


def test_the_reader_and_the_closest_wording_count_the_same_control_characters() -> None:
    """read.looks_binary (on an input's first bytes) and resemble._garbled (on a line) counted two
    different sets: VT in one, ESC in the other. Whitespace and ESC (a coloured log's escapes
    reach the sniff before read.clean removes them) are text to both; the other control
    characters are not."""
    from generator.matcher.read import CONTROL_BYTES, looks_binary
    from generator.matcher.resemble import _garbled

    coloured = "\x1b(B\x1b[m" * 3 + "ERROR: NCCL error"
    spaced = "\x0b\x0c".join(["RuntimeError: CUDA error: out of memory"] * 3)
    assert not _garbled(coloured) and not _garbled(spaced)
    assert not looks_binary(coloured.encode() * 8) and not looks_binary(spaced.encode() * 8)
    noisy = "".join(chr(b) for b in CONTROL_BYTES) + "cannot open"
    assert _garbled(noisy) and looks_binary(noisy.encode() * 8)
    assert not set(b"\t\n\x0b\x0c\r\x1b") & set(CONTROL_BYTES)
