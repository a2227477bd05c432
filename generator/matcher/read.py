r"""Read a log of any size and content as line-aligned byte chunks, in constant memory.

Whatever the bytes are, reading never fails: NUL bytes and ANSI colour or cursor codes are
removed, invalid UTF-8 is left for the decoder to replace. What a copy and paste adds is undone
(``clean``): HTML character references, no-break spaces, zero-width characters, reply quote
markers; a log pasted from a rendered page otherwise loses half its findings. Line numbers
count LF-terminated lines from 1.

Escaped text. An error that passed through several layers of JSON or Go quoting (runc inside
containerd inside Docker, a structured log holding a Windows path) arrives with runs of
backslashes: ``exec: \\\"nvidia-container-cli\\\": executable file not found``. Every run of
two or more backslashes is read as one, so a signature written for one level of quoting
(``\\{0,3}"``) reads them all; no signature may require two backslashes in a row (the corpus
tests check that each example still matches as read).

Long lines. A line longer than ``MAX_LINE_BYTES`` is first split at its carriage returns
(a progress bar redraws itself with bare CRs, so an error printed after one sits at the end
of a very long "line"): the pieces keep the line's number and are matched one by one. Only a
stretch with neither CR nor LF that is longer than the limit is cut: its first and its last
``MAX_LINE_BYTES`` are matched, the middle is skipped (not kept), and ``cut_lines`` counts it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import BinaryIO, Iterator

CHUNK_BYTES = 1 << 20
MAX_LINE_BYTES = 64 * 1024

# CSI (colours, cursor), OSC (titles, links: to BEL or ST), nF (character-set choice: tput sgr0
# ends a colour with `ESC ( B`) and the one-byte Fe escapes.
_ANSI = re.compile(rb"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[ -/]+[0-~]|[@-Z\\-_])")
_BACKSLASH_RUN = re.compile(rb"\\{2,}")


@dataclass
class Chunk:
    """Complete lines of the input: ``data`` ends with LF (except possibly at end of input)."""

    data: bytes
    first_line: int  # number of the first line in ``data``
    lfs: int = -1  # LFs in ``data`` when the reader counted them anyway (-1: not counted)

    def line_at(self, pos: int) -> int:
        """The number of the line that holds byte ``pos``: LFs counted from the nearer end."""
        if self.lfs >= 0 and pos > len(self.data) // 2:
            return self.first_line + self.lfs - self.data.count(b"\n", pos)
        return self.first_line + self.data.count(b"\n", 0, pos)


@dataclass
class InputStats:
    lines: int = 0
    bytes: int = 0
    cut_lines: int = 0  # stretches without CR or LF longer than MAX_LINE_BYTES: only their ends were matched
    binary: int = 0  # inputs whose first SNIFF_BYTES look binary (looks_binary): a program, an image, a core dump
    cr_lines: int = 0  # inputs whose lines end in CR alone (ChunkReader.feed): each CR read as a line break


SNIFF_BYTES = 64 << 10
# control bytes a text log does not hold: all below space but NUL (a crash leaves runs of it; it is
# counted apart), the whitespace ones (tab, LF, VT, FF, CR) and ESC (a coloured log is text; the
# sniff reads bytes before read.clean removes the escapes), and DEL. resemble._garbled counts the
# same characters.
CONTROL_BYTES = bytes(b for b in range(1, 32) if b not in (9, 10, 11, 12, 13, 27)) + b"\x7f"


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of an input are a program, an image or a core dump rather than a
    log: more than one byte in twenty (NULs apart) a control byte, or one character in twenty not
    UTF-8. NULs alone do not decide it: a syslog holds runs of them where a crash cut it short,
    and UTF-16 text one after every character; a head of nothing but NULs is binary."""
    if len(head) < 16:
        return False
    text = head.replace(b"\0", b"")
    if not text:
        return True
    control = len(text) - len(text.translate(None, CONTROL_BYTES))
    decoded = text[:-4].decode("utf-8", errors="replace")  # a character cut at the end is no error
    broken = decoded.count("\ufffd")
    return max(control / len(text), broken / max(1, len(decoded))) > 0.05


# Characters a web page, chat client, word processor or gcc's UTF-8 locale puts in text, read as
# the plain ones signatures are written with: typographic quotes as ASCII quotes; no-break,
# en/em, thin, narrow no-break and ideographic spaces as a space; zero-width characters and a
# byte-order mark dropped. A log pasted from a rendered page has U+00A0 between words.
_NBSP = b"\xc2\xa0"
_PASTE_CHARS = {
    "\u201c".encode(): b'"', "\u201d".encode(): b'"', "\u2018".encode(): b"'", "\u2019".encode(): b"'",
    **{chr(cp).encode(): b" " for cp in (*range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)},
    **{chr(cp).encode(): b"" for cp in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF)},
}
# one pattern per lead: a pattern that starts with a fixed run of bytes is searched for that
# run (fast), an alternation of different first bytes is tried at every position (20x slower)
# Led by one byte each, so that the search for that byte (a memchr) runs before the pattern. A
# two-byte ``in`` test would cost more than the pattern itself where the lead byte is frequent
# (progress bars draw with U+2588 and friends, \xe2\x96\x88): 0.9 ms against 0.3 ms per MiB.
_PASTE_E2 = re.compile(rb"\xe2(?:\x80[\x80-\x8d\x98\x99\x9c\x9d\xaf]|\x81[\x9f\xa0])")
_PASTE_OTHER = re.compile(rb"\xe3\x80\x80|\xef\xbb\xbf")
# HTML character references left in text copied from page source, a mail or an API response.
# Decoded once (``&amp;lt;`` reads as ``&lt;``); a control character never becomes one (a
# reference to LF must not add a line), it reads as a space.
_HTML_REF = re.compile(rb"&(?:(lt|gt|amp|quot|apos|nbsp)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED_REFS = {b"lt": b"<", b"gt": b">", b"amp": b"&", b"quot": b'"', b"apos": b"'", b"nbsp": b" "}
# Escaped line breaks (_unescape_lines): three on one line make it a whole escaped log, found by
# one search that starts with fixed bytes
_ESCAPED_RUN = re.compile(rb"\\n[^\n]*?\\n[^\n]*?\\n")
_LOG_BREAK = re.compile(rb'\\n(?:[ \t\[\]"\'\\0-9(<]|$)', re.M)
# Quote markers at the start of a line: a log quoted in a reply ("> ", "> > ", ">> ").
QUOTE_LOOK_BYTES = 64 << 10
_QUOTE_MARKS = re.compile(rb"\n(?:>[ \t]?)+")  # after an LF: searched for "\n>" (fast), not at every position
_LEADING_QUOTE_MARKS = re.compile(rb"(?:>[ \t]?)+")


# An error report that gives an exception's type and message on two lines of their own, as
# ComfyUI's report and other Markdown summaries do (``- **Exception Type:** X`` then
# ``- **Exception Message:** Y``, or rendered, without the asterisks): read as ``X: Y`` too.
_EXCEPTION_REPORT = re.compile(
    rb"^[-*+ \t]*(?:\*\*)?Exception Type:(?:\*\*)?[ \t]*`?([A-Za-z_][\w.]*)`?[ \t]*\r?\n"
    rb"([-*+ \t]*(?:\*\*)?Exception Message:(?:\*\*)?[ \t]*)([^\r\n]*)", re.M)


def _exception_report(m: re.Match) -> bytes:
    """The message line followed (after a CR, under its own number) by ``Type: message``."""
    message = m.group(3).rstrip()
    if len(message) > 1 and message[:1] == message[-1:] == b"`":
        message = message[1:-1]
    return m.group(0) + b"\r" + m.group(1) + b": " + message


def _paste_char(m: re.Match) -> bytes:
    return _PASTE_CHARS[m.group()]


def _html_ref(m: re.Match) -> bytes:
    if m.group(1):
        return _NAMED_REFS[m.group(1)]
    cp = int(m.group(2), 10) if m.group(2) else int(m.group(3), 16)
    if cp < 0x20 or 0x7F <= cp < 0xA0 or 0xD800 <= cp < 0xE000 or cp > 0x10FFFF:
        return b" "
    return b" " if cp == 0xA0 else chr(cp).encode()


def _unescape_lines(data: bytes) -> bytes:
    """Lines that hold a whole log JSON- or Python-escaped (``\\n`` between its lines: a
    termination message, a structured log's field, an exception's repr) read as that log: the
    line is followed (after a CR) by a copy where each escaped break is a CR, an escaped tab a
    tab, an escaped quote a quote, so the matcher reads the line as printed, then its pieces one
    by one, all under the line's own number (line numbers still count the input's own lines).
    The line as printed stays: a signature may be written for the escaped form (mig-parted logs
    the reset tool's report as ``msg="\\nThe following GPUs...``). Only a line with at least
    three escaped breaks, one of them followed by what starts or ends a log line (a
    blank, an indent, a bracket, a quote, a digit, the line's end), is read so: one or two are a
    record's trailing newline, and a Windows path's ``\\nvidia\\nvcc`` is followed by letters."""
    # first, without a regex: three escaped breaks share a line when two pieces in a row between
    # them hold no LF (a container runtime's JSON records hold one each: 1 ms per MiB, not 16)
    pieces = data.split(b"\\n")
    no_lf = [b"\n" not in piece for piece in pieces[1:-1]]
    if not any(a and b for a, b in zip(no_lf, no_lf[1:])):
        return data
    out: list[bytes] = []
    done = 0
    found = _ESCAPED_RUN.search(data)
    while found:
        start = data.rfind(b"\n", 0, found.start()) + 1
        end = data.find(b"\n", found.end())
        end = len(data) if end < 0 else end
        if _LOG_BREAK.search(data, start, end + 1):
            line = data[start:end]
            out += [data[done:start], line, b"\r",
                    line.replace(b"\\n", b"\r").replace(b"\\r", b"\r").replace(b"\\t", b"\t").replace(b'\\"', b'"')]
            done = end
        found = _ESCAPED_RUN.search(data, end)
    return b"".join(out) + data[done:] if out else data


def clean(data: bytes) -> bytes:
    """Remove what is not log text: NUL bytes and ANSI escape sequences; read a run of
    backslashes (layers of quoting) as one, and typographic quotes as plain ones (gcc in a
    UTF-8 locale prints ‘…’, forums and word processors turn "…" into “…”), so a signature
    written with plain quotes reads every copy. Text a paste picked up on the way is read as the
    tool printed it: HTML character references decoded once, no-break and other wide spaces as
    a plain space, zero-width characters dropped, quote markers at a line's start (a log quoted
    in a reply) removed. An exception's type and message reported on two lines (``Exception
    Type:`` / ``Exception Message:``) are also read as one ``Type: message``.

    CR is left in place: the matcher splits lines on it (progress bars redraw with bare CR,
    Windows lines end in CR LF), which handles both without copying the whole chunk.
    """
    # Searching for one byte is a memchr; for two or more it is several times slower, so each
    # longer search waits behind a one-byte one that can rule it out.
    if b"\x00" in data:
        data = data.replace(b"\x00", b"")
    if b"\x1b" in data:
        data = _ANSI.sub(b"", data)
    if b"&" in data and b";" in data:
        data = _HTML_REF.sub(_html_ref, data)
    if b"\\" in data and b"\\\\" in data:
        data = _BACKSLASH_RUN.sub(rb"\\", data)
    if b"\xc2" in data and _NBSP in data:
        data = data.replace(_NBSP, b" ")
    if b"\xe2" in data:  # the quotes' and most spaces' lead byte (also dashes, box and block drawing)
        data = _PASTE_E2.sub(_paste_char, data)
    if (b"\xe3" in data and b"\xe3\x80\x80" in data) or (b"\xef" in data and b"\xef\xbb\xbf" in data):
        data = _PASTE_OTHER.sub(_paste_char, data)
    if b"\\" in data and b"\\n" in data:
        data = _unescape_lines(data)
    # a quoted reply is a paste, quoted from its first lines: only its head is searched
    if data[:1] == b">" or b"\n>" in data[:QUOTE_LOOK_BYTES]:
        data = _QUOTE_MARKS.sub(b"\n", data)
        if data[:1] == b">":
            data = data[_LEADING_QUOTE_MARKS.match(data).end():]
    if b"Exception Message:" in data:  # after the quote markers: a report quoted in a reply too
        data = _EXCEPTION_REPORT.sub(_exception_report, data)
    return data


def _may_hold_long_line(body: bytes) -> bool:
    """False when no line of ``body`` can be longer than MAX_LINE_BYTES, found without splitting it.

    If every window of half the limit holds an LF, no two LFs are further apart than the limit.
    A few ``find`` calls per MiB instead of a split into every line; True only sends the body to
    the exact line-by-line path.
    """
    half = MAX_LINE_BYTES // 2
    find = body.find
    for at in range(0, len(body), half):
        if find(b"\n", at, at + half) < 0:
            return True
    return False


class ChunkReader:
    """Turns blocks of bytes, as they arrive, into cleaned line-aligned chunks.

    Used by ``chunks`` for files and by the browser, which receives a file piece by piece.
    Memory stays bounded: besides the block being read, at most one partial line (never
    more than MAX_LINE_BYTES) and the tail of one over-long stretch are kept.
    """

    def __init__(self, stats: InputStats):
        self.stats = stats
        self.line = 1
        self.carry = b""
        self.tail: bytes | None = None  # inside an over-long stretch: its last bytes after the head
        self.partial = False  # pieces of the current line went out already (it counts even if nothing is left)
        # Lines that end in CR alone (a serial console's capture, a classic Mac tool): no LF in the
        # input's first SNIFF_BYTES (or all of it), CRs there, one per 8 bytes at most (a flood of
        # bare CRs is no lines). Read with each CR as a line break, as the input's editor shows
        # it; otherwise the whole input would be one line of CR segments (progress-bar redraws),
        # counted as one event with the first segment's time. None: not decided yet.
        self.cr_lines: bool | None = None
        self.cr_before = False  # the last block ended in CR (an LF starting the next one is its pair)

    def feed(self, block: bytes) -> list[Chunk]:
        out: list[Chunk] = []
        if not block:
            return out
        if not self.stats.bytes:  # the input's first piece (the browser's and the CLI's are 1 MiB or more)
            self.stats.binary = int(looks_binary(block[:SNIFF_BYTES]))
        self.stats.bytes += len(block)
        if self.cr_lines is None:
            block = self._cr_head(block)
            if block is None:
                return out
        if self.cr_lines:
            block = self._cr_to_lf(block)
        self._take(block, out)
        return out

    def _take(self, block: bytes, out: list[Chunk]) -> None:
        """Emit the complete lines that ``block`` ends with what was carried; carry the rest."""
        if self.tail is not None:
            rest = self._skip(block, out)
            if rest is None:
                return
            block = rest
        cut = block.rfind(b"\n")
        if cut >= 0:  # the carried partial line and the block's complete lines, copied once
            body = b"".join((self.carry, memoryview(block)[: cut + 1])) if self.carry else block[: cut + 1]
            self._lines(body, out)
            self.carry = block[cut + 1:]
            self.partial = False
        else:
            self.carry += block
        if len(self.carry) > MAX_LINE_BYTES:
            self._bound_carry(out)

    def _cr_head(self, block: bytes) -> bytes | None:
        """While the input's head is read: decide on CR lines once an LF or SNIFF_BYTES is seen.
        Undecided, the block joins the carried partial line (with no LF it would anyway); once
        decided, the carry comes back with the block, to be read as the decision says."""
        seen = len(self.carry) + len(block)
        if b"\n" not in block and seen < SNIFF_BYTES:
            self.carry += block
            return None
        joined, self.carry = self.carry + block, b""
        self._decide_cr(joined[:SNIFF_BYTES])
        return joined

    def _decide_cr(self, head: bytes) -> None:
        crs = head.count(b"\r") if b"\n" not in head else 0
        self.cr_lines = 2 <= crs <= len(head) // 8
        self.stats.cr_lines = int(self.cr_lines)

    def _cr_to_lf(self, block: bytes) -> bytes:
        """A block of a CR-line input with each CR, or CR LF, as one LF."""
        if self.cr_before and block[:1] == b"\n":
            block = block[1:]
        self.cr_before = block[-1:] == b"\r"
        return block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")

    def close(self) -> list[Chunk]:
        out: list[Chunk] = []
        if self.cr_lines is None:  # an input shorter than SNIFF_BYTES without LF: all of it is carried
            self._decide_cr(self.carry)
            if self.cr_lines and self.carry:
                block, self.carry = self._cr_to_lf(self.carry), b""
                self._take(block, out)
        if self.tail is not None:
            if self.tail:
                out.append(Chunk(clean(self.tail) + b"\n", self.line))
            self.tail = None
            self.line += 1
        elif self.carry or self.partial:
            if self.carry:
                self._pieces(self.carry, out)
            self.line += 1
            self.carry = b""
        self.partial = False
        self.stats.lines = self.line - 1
        return out

    def _lines(self, body: bytes, out: list[Chunk]) -> None:
        """Emit complete lines; an over-long one goes out in pieces under its own number."""
        if len(body) <= MAX_LINE_BYTES or not _may_hold_long_line(body):
            lfs = body.count(b"\n")  # clean() removes neither LF nor anything that holds one
            out.append(Chunk(clean(body), self.line, lfs))
            self.line += lfs
            return
        run: list[bytes] = []
        run_start = self.line
        for line in body[:-1].split(b"\n"):
            if len(line) <= MAX_LINE_BYTES:
                run.append(line)
                self.line += 1
                continue
            if run:
                out.append(Chunk(clean(b"\n".join(run) + b"\n"), run_start))
                run = []
            self._pieces(line, out)
            self.line += 1
            run_start = self.line
        if run:
            out.append(Chunk(clean(b"\n".join(run) + b"\n"), run_start))

    def _pieces(self, line: bytes, out: list[Chunk]) -> None:
        """One line (no LF) as pieces of whole CR-separated segments, each at most the limit."""
        if len(line) <= MAX_LINE_BYTES:
            out.append(Chunk(clean(line) + b"\n", self.line))
            return
        # cut at the last CR that keeps each piece within the limit: a search per piece, not a
        # Python step per segment (200 MB of bare CRs is 200 million empty segments)
        pos, end = 0, len(line)
        while pos < end:
            if end - pos <= MAX_LINE_BYTES:
                out.append(Chunk(clean(line[pos:]) + b"\n", self.line))
                return
            cut = line.rfind(b"\r", pos, pos + MAX_LINE_BYTES + 1)
            if cut < 0:  # a segment over the limit: its two ends
                stop = line.find(b"\r", pos)
                stop = end if stop < 0 else stop
                self.stats.cut_lines += 1
                out.append(Chunk(clean(line[pos:pos + MAX_LINE_BYTES]) + b"\n", self.line))
                out.append(Chunk(clean(line[max(stop - MAX_LINE_BYTES, pos):stop]) + b"\n", self.line))
                pos = stop + 1
            elif cut == pos:  # an empty segment before one over the limit
                pos += 1
            else:
                out.append(Chunk(clean(line[pos:cut]) + b"\n", self.line))
                pos = cut + 1

    def _bound_carry(self, out: list[Chunk]) -> None:
        """A partial line over the limit: emit its finished CR segments, cut a stretch without CR."""
        cr = self.carry.rfind(b"\r")
        if cr >= 0:
            self._pieces(self.carry[:cr], out)
            self.carry = self.carry[cr + 1:]
            self.partial = True
        if len(self.carry) > MAX_LINE_BYTES:
            self.partial = True
            self.stats.cut_lines += 1
            out.append(Chunk(clean(self.carry[:MAX_LINE_BYTES]) + b"\n", self.line))
            self.tail = self.carry[MAX_LINE_BYTES:][-MAX_LINE_BYTES:]
            self.carry = b""

    def _skip(self, block: bytes, out: list[Chunk]) -> bytes | None:
        """Inside an over-long stretch: keep its last bytes until a CR or LF ends it."""
        ends = [i for i in (block.find(b"\r"), block.find(b"\n")) if i >= 0]
        if not ends:
            self.tail = (self.tail + block)[-MAX_LINE_BYTES:]
            return None
        end = min(ends)
        tail = (self.tail + block[:end])[-MAX_LINE_BYTES:]
        if tail:
            out.append(Chunk(clean(tail) + b"\n", self.line))
        self.tail = None
        if block[end:end + 1] == b"\n":
            self.line += 1
            self.partial = False
        return block[end + 1:]


def chunks(stream: BinaryIO, stats: InputStats, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Chunk]:
    """Yield cleaned, line-aligned chunks of ``stream``; update ``stats`` as it goes."""
    reader = ChunkReader(stats)
    while True:
        block = stream.read(chunk_bytes)
        if not block:
            break
        yield from reader.feed(block)
    yield from reader.close()
