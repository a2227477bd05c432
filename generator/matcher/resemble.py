"""The closest wording: what the atlas knows that a log's unmatched error lines resemble.

Signatures are exact: a failure printed in words nobody has written a pattern for (an older
release, a wrapper that rephrases it, a line cut by a terminal) matches nothing, and the
report would say "no known failure". When a log holds no failure finding, or only findings of
wrapper entries (a launcher's "a worker failed", the shell's "Segmentation fault": they say that
something stopped, not why), its error-looking
lines are compared, word by word, with every real example line of the corpus; an entry whose
example shares most of the distinctive words of such a line is reported as a resemblance:
a lead to check, never a confirmed root cause (``resembles`` in the report, apart from
``findings``; it does not count for ``--fail-on``).

The words. A line is reduced to its words of three or more letters and digits (lower-cased;
hexadecimal and numeric runs, log furniture such as ``traceback`` or ``error`` dropped). Each
word weighs ``ln(N / n)``: N entries, n of them use the word in their examples, titles or
aliases, so a word that names one failure weighs much more than one that many share. A line
and an example are compared by the F-measure of their shared weight (how much of the
example the line covers, and how much of the line the example explains), and the pair must
share a minimum weight, ``MIN_SHARED * ln(N)``: about two words that few entries use, and
at least one word that no more than one entry in twenty uses.

Near misses stay quiet. The lines of entries of severity ``info`` (harmless notes) are
indexed too: a line that resembles one of them at least as much as any failure is left alone.
A signature's counter-examples are quiet lines too, with one exception: a counter-example
that reads like another entry's example (F-measure ``SIBLING`` or more) is that sibling's
failure line (``CUBLAS_STATUS_NOT_SUPPORTED`` written down so that the
``CUBLAS_STATUS_INVALID_VALUE`` signature skips it), and it only keeps leads away from its own
entry: silencing every entry for it hid the very sibling it names. (Measured on the dev field
sample with each log's own thread left out of the corpus, tools/field_loto.py: 637 to 661 of
901 right first, no false alarm on the 91 healthy logs.)

A line is compared only when it says something went wrong (``error``, ``cannot``, ``out of
memory``...) and its logger did not file it at INFO or DEBUG level.

Bounded work. Only the last ``TAIL_BYTES`` of each input are looked at (a failure that ends
a job is printed near its end; a pasted log is usually shorter than that), lines longer than
``MAX_LINE_CHARS`` are skipped, the same words are looked at once, and at most
``MAX_LINES`` lines per job are kept.

The index is built from the corpus with ``index_for`` and travels in rules.json, so the
browser's log doctor runs the same comparison.

Wrapped lines. The same tail serves one more reading before the comparison: a failure line
that a terminal or a web page broke in two matches no signature on either half, so, while a
job has no failure, each input's last lines are matched again with each two adjacent lines
joined (``TailLines.joined``, read by ``job.Source``): a real signature match, not a lead.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from .read import CONTROL_BYTES

TAIL_BYTES = 1 << 20
JOIN_BYTES = 256 << 10  # the end of the tail whose adjacent lines are also read joined (see TailLines.joined)
JOIN_JOB_BYTES = 4 << 20  # ...and at most this much joined text per job, in input order (an archive of many logs)
# hard wrapping (TailLines.wrap_width): the widths a terminal, a mail or a page wraps at, and
# how many full-width rows, and rows cut inside a word, show it
WRAP_MIN_WIDTH, WRAP_MAX_WIDTH = 40, 400
WRAP_MIN_ROWS, WRAP_MIN_SPLITS = 2, 1
WRAP_COLUMNS = frozenset((72, 76, 78, 79, 80, 100, 120, 132))
# a row counts as cut when it is this close to the width: reading shortens a row that held a run
# of backslashes or an HTML reference (read.clean), which would otherwise end the line there
WRAP_SLACK = 8
MAX_LINE_CHARS = 2000
MAX_LINES = 1000  # per job, in input order
MAX_RESULTS = 3
THRESHOLD = 0.45  # F-measure of shared word weight
MIN_SHARED = 1.15  # shared weight, in units of ln(N): about two words that few entries use
DISTINCTIVE = math.log(20)  # a word at most one entry in twenty uses: a lead shares one at least
REACH_WORDS = 8  # examples are looked up through a line's heaviest words only
SIBLING = 0.8  # a counter-example this close to another entry's example is that entry's failure line

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
_NUMERIC = re.compile(r"[0-9a-fx_]+")
# Log furniture and everyday words: they say a line is an error, not which one.
STOP_WORDS = frozenset("""
the and for with not was has have this that from are but you your can will into its use using when then than
been were which while after before there their they what all any our out per via
traceback most recent call last file line error errors failed failure fail warning warn info debug fatal
exception runtimeerror valueerror python site packages dist lib usr local home root opt self return raise see above
below please details more information output process main module none true false
stack trace backtrace check aborted core dumped
""".split())
# A line worth comparing says something went wrong.
_ERRORISH = re.compile(
    r"error|fail|exception|fatal|cannot|can't|unable|not found|denied|abort|killed|refused|timed? ?out|invalid"
    r"|unsupported|not supported|mismatch|insufficient|out of memory|no such|panic|crash|could not|couldn't|illegal"
    r"|no .{0,30}(?:device|gpu)"
    # the words of a failure stated without 'error' ('LnkSta: Speed 2.5GT/s (downgraded)', 'nvidia:
    # Unknown symbol', 'The engine plan file is generated on an incompatible device')
    r"|incompatib|unknown symbol|not available|downgraded|unrecognized|missing|exceed|terminated|segmentation fault"
    r"|not compiled|no kernel image|disabled|not installed|not set|no longer|\boom", re.IGNORECASE)
# ...unless its logger calls it routine: a line at INFO or DEBUG level ('heartbeat ok ... timeout')
_ROUTINE = re.compile(r"(?:^|[\s\[(|])(?:INFO|DEBUG|TRACE|NOTICE)(?:[\s\])|:]|$)")


# read.looks_binary's control characters, and NUL and the replacement character (bytes that were
# not UTF-8), which a line still holds here
_GARBLE = re.compile("[" + re.escape(CONTROL_BYTES.decode("latin-1")) + "\x00\ufffd]")


def _garbled(text: str) -> bool:
    """Whether a line is mostly not text (bytes of a program or an image that happen to spell
    'not found'): one character in ten a control character or undecodable."""
    return len(_GARBLE.findall(text)) * 10 > len(text)


def says_wrong(text: str) -> bool:
    """Whether a line says something went wrong, and its logger did not file it as routine: a
    level word counts where it comes before the failure's words ('I0412 ... INFO ... timed out'),
    not inside the message ('ValueError: (InvalidArgument) ... check the INFO log above')."""
    wrong = _ERRORISH.search(text)
    if not wrong:
        return False
    routine = _ROUTINE.search(text, 0, wrong.start() + 1)
    return routine is None


def words(text: str) -> frozenset[str]:
    """The comparable words of a line."""
    out = set()
    for w in _WORD.findall(text):
        w = w.lower()
        if w in STOP_WORDS or (_NUMERIC.fullmatch(w) and any(c.isdigit() for c in w)):
            continue
        out.add(w)
    return frozenset(out)


_LAST_WORD = re.compile(_WORD.pattern + "$")
_FIRST_WORD = re.compile(_WORD.pattern)


def _last_word(text: str) -> str | None:
    """The word a line ends in, with no punctuation after it: where a cut line stops mid-word."""
    m = _LAST_WORD.search(text)
    return m.group(0).lower() if m else None


def _first_word(text: str) -> str | None:
    """The word a line starts with, nothing before it: where an excerpt starts mid-word."""
    m = _FIRST_WORD.match(text)
    return m.group(0).lower() if m else None


def index_for(entries: Iterable) -> dict:  # noqa: ANN001 - corpus.model.Entry objects
    """The comparison index for rules.json: per entry the words of its lines (one line of text per
    example, words sorted and space-separated), per entry the words of its signatures'
    counter-examples that are a sibling's failure lines (``near``), and those of the lines that
    must stay quiet (notes, other counter-examples), each line once."""

    def line_of(text: str) -> str | None:
        w = words(text)
        return " ".join(sorted(w)) if len(w) >= 2 else None

    def each_once(lines: dict[str, list[str]]) -> dict[str, str]:
        return {e: "\n".join(dict.fromkeys(ls)) for e, ls in lines.items()}

    docs: dict[str, list[str]] = {}
    near: dict[str, list[str]] = {}
    quiet: list[str] = []
    counter: list[tuple[str, str, str, bool]] = []  # counter-examples: (entry, words, text, a note's or wrapper's)
    patterns: dict[str, list[str]] = {}  # a failure entry's signature patterns
    for e in entries:
        # a note's lines, and a wrapper's ("a worker failed", "Segmentation fault": they name no
        # cause, and the log doctor looks for leads beside them), stay quiet
        calm = e.severity == "info" or e.wrapper
        for text in [e.title, *e.aliases, *(ex.line for s in e.signatures for ex in s.examples)]:
            if line := line_of(text):
                (quiet.append(line) if calm else docs.setdefault(e.id, []).append(line))
        for s in e.signatures:
            for text in s.counter_examples:
                if line := line_of(text):
                    counter.append((e.id, line, text, calm))
            if not calm and s.pattern:
                patterns.setdefault(e.id, []).append(s.pattern)
    # a counter-example that reads like another entry's example line is that sibling's failure:
    # it keeps the lead away from its own entry only; any other stays quiet for every entry (a
    # harmless line written down beside a signature). Two kinds are left out instead, when a
    # failure entry's signature matches the counter-example as well: a note's or a wrapper's (they
    # never lead), and a failure entry's own line written down against another of its signatures.
    # Either is that failure's line, and as a quiet line it silenced that very failure's closest
    # wording (the note on XLA's rematerialisation lists JAX's out-of-memory line). Reading alike
    # is not enough for these: 'failed (exitcode: -9)' reads word for word like the SIGBUS entry's
    # 'failed (exitcode: -7)', and is no shared-memory failure.
    siblings = Resembler({"docs": each_once(docs), "quiet": ""})
    for entry_id, line, text, calm in counter:
        best = siblings._best(frozenset(line.split()))
        alike = [other for other, (f, _) in best.items() if f >= SIBLING]
        if not calm and any(other != entry_id for other in alike):
            near.setdefault(entry_id, []).append(line)
        # (a note's own patterns are not in ``patterns``: for it, alike entries are other entries)
        elif not any(re.search(p, text) for other in alike for p in patterns.get(other, ())):
            quiet.append(line)
    return {"docs": each_once(docs), "near": each_once(near), "quiet": "\n".join(dict.fromkeys(quiet))}


@dataclass
class Loose:
    """An unmatched error-looking line of one input, with its comparable words."""

    source: int
    line: int
    text: str
    terms: frozenset[str] = field(default=None)  # type: ignore[assignment] - words(text), computed when not given

    def __post_init__(self) -> None:
        if self.terms is None:
            self.terms = words(self.text)


class Resembler:
    """Compares lines with the index of rules.json (``resemble``)."""

    def __init__(self, index: dict | None):
        index = index or {"docs": {}, "quiet": ""}
        self.entries: list[str] = []
        self.doc_words: list[frozenset[str]] = []
        intern = sys.intern  # the same words recur across thousands of lines: one copy each
        for entry, text in index["docs"].items():
            for line in text.split("\n"):
                self.entries.append(entry)
                self.doc_words.append(frozenset(map(intern, line.split())))
        # lines i >= near_from are near misses: a sibling's failure lines written as an entry's
        # counter-examples, then, from quiet_from on, lines of no entry that silence every entry
        # ("" marks them)
        self.near_from = len(self.entries)
        for entry, text in (index.get("near") or {}).items():
            for line in text.split("\n"):
                self.entries.append(entry)
                self.doc_words.append(frozenset(map(intern, line.split())))
        self.quiet_from = len(self.entries)
        for text in index["quiet"].split("\n") if index["quiet"] else ():
            self.entries.append("")
            self.doc_words.append(frozenset(map(intern, text.split())))
        users: dict[str, set[str]] = {}
        for entry, ws in zip(self.entries[:self.near_from], self.doc_words[:self.near_from]):
            for w in ws:
                users.setdefault(w, set()).add(entry)
        self.n = max(1, len(set(self.entries[:self.near_from])))
        self.weight = {w: math.log(self.n / len(es)) for w, es in users.items()}
        self.unknown = math.log(self.n) if self.n > 1 else 1.0
        self.min_shared = MIN_SHARED * self.unknown
        self.distinctive = min(DISTINCTIVE, self.unknown)  # in a corpus of under twenty: a word one entry uses
        self.mass: list[float] = []
        self.postings: dict[str, list[int]] = {}
        for i, ws in enumerate(self.doc_words):
            self.mass.append(math.fsum(self.weight.get(w, self.unknown) for w in ws))
            for w in ws:
                if self.weight.get(w, self.unknown) > 0:
                    self.postings.setdefault(w, []).append(i)

    def _best(self, ws: frozenset[str], fragment: str | None = None,
              head: str | None = None) -> dict[str, tuple[float, int]]:
        """Per entry the best F-measure of one line against its examples (with the example's
        index); an entry whose counter-examples the line resembles at least as much is left out,
        and all are when a note's line does.

        ``fragment``: the line's last word, where a cut line stops mid-word (a search excerpt, a
        paste that stopped: '... failed to initialize CUDA: forward com'). It counts as itself,
        or as the heaviest word of an example that begins with it when the example lacks the word
        itself ('com' as 'compatibility'), when few entries use it whole. ``head``: the line's
        first word, where an excerpt starts mid-word ('udnn_cnn_infer64_8.dll'): likewise, or as
        a word that ends with it."""
        cut: list[tuple[str, float, bool]] = []  # (fragment, its own weight, True: a line's end)
        for word, at_end in ((fragment, True), (head if head != fragment else None, False)):
            # a word many entries use whole ('gpu', 'error') was not cut: only a rare or unknown
            # one is read as a piece of a longer word ('Application uses missing NVIDIA GPU' is
            # no 'gpu_nvml')
            if word and word in ws and self.weight.get(word, self.unknown) >= self.distinctive:
                ws = ws - {word}
                cut.append((word, self.weight.get(word, self.unknown), at_end))
        line_mass = math.fsum(self.weight.get(w, self.unknown) for w in ws)
        if line_mass <= 0:
            return {}
        # the examples reached through a distinctive word among the line's heaviest (one that at
        # most one entry in twenty uses): the long lists of everyday words ('cuda', 'gpu') are not
        # walked
        reached: set[int] = set()
        # (a cut word reaches the examples that hold it whole)
        heaviest = sorted(ws | {c[0] for c in cut}, key=lambda w: (-self.weight.get(w, self.unknown), w))[:REACH_WORDS]
        for w in heaviest:
            if self.weight.get(w, self.unknown) >= self.distinctive:
                reached.update(self.postings.get(w, ()))
        shared: dict[int, tuple[float, float]] = {}  # example -> (shared weight, the line's weight against it)
        for i in reached:
            doc = self.doc_words[i]
            s = math.fsum(self.weight.get(w, self.unknown) for w in ws & doc)
            mass = line_mass
            for word, own, at_end in cut:
                if word in doc:
                    s += own
                    mass += own
                    continue
                whole = max((self.weight.get(w, self.unknown) for w in doc
                             if (w.startswith(word) if at_end else w.endswith(word)) and w not in ws), default=None)
                s += whole or 0.0
                mass += own if whole is None else whole
            shared[i] = (s, mass)
        best: dict[str, tuple[float, int]] = {}
        near: dict[str, float] = {}  # per entry, how much the line resembles its counter-examples
        quiet = 0.0
        for i, (s, mass) in shared.items():
            if s < self.min_shared or self.mass[i] <= 0:
                continue
            recall, precision = s / self.mass[i], s / mass
            f = 2 * recall * precision / (recall + precision)
            entry = self.entries[i]
            if not entry:
                quiet = max(quiet, f)
            elif i >= self.near_from:
                near[entry] = max(near.get(entry, 0.0), f)
            elif f > best.get(entry, (0.0, -1))[0]:
                best[entry] = (f, i)
        return {e: v for e, v in best.items() if v[0] > max(quiet, near.get(e, 0.0))}

    def closest(self, lines: Iterable[Loose]) -> list[dict]:
        """Up to MAX_RESULTS entries the lines resemble, best first: entry id, similarity, the
        line (source, number, text) and the words it shares with the entry's closest example."""
        found: dict[str, tuple[float, Loose, int]] = {}
        for loose in lines:
            for entry, (f, i) in self._best(loose.terms, _last_word(loose.text), _first_word(loose.text)).items():
                if f >= THRESHOLD and f > found.get(entry, (0.0,))[0]:
                    found[entry] = (f, loose, i)
        ranked = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[1][1].source, kv[1][1].line))
        out = []
        for entry, (f, loose, i) in ranked[:MAX_RESULTS]:
            shared = sorted(loose.terms & self.doc_words[i])
            out.append({"id": entry, "similarity": round(f, 2), "source": loose.source, "line": loose.line,
                        "text": loose.text, "shared_words": shared})
        return out


def glue(line: bytes, following: bytes) -> bytes:
    """Two adjacent lines written as one. A line wrapped by a terminal or a page is cut anywhere
    and its rows are glued as they are (``out of me`` + ``mory``). A message that a program wrapped
    at a word and printed behind a head each of its lines repeats (a Compose service's
    ``tabbyapi  |`` and a rich traceback's indentation; ``[rank0]:``) continues after that head:
    the head the two lines share, up to its last blank, is dropped from the second line and the
    rest follows the first after one space."""
    shared = len(os.path.commonprefix((line, following)))
    cut = max(following.rfind(b" ", 0, shared), following.rfind(b"\t", 0, shared)) + 1  # after the head's last blank
    rest = following[cut:].lstrip(b" \t")
    if cut < 4 or not rest or not line[cut:].strip():  # no head, or nothing after it on one line
        return line + following
    return line.rstrip(b" \t") + b" " + rest


class TailLines:
    """The last TAIL_BYTES of one input, kept as the chunks it was read in (no copy), then the
    error-looking lines among them."""

    def __init__(self) -> None:
        self.chunks: deque = deque()  # read.Chunk objects
        self.size = 0

    def add(self, chunk) -> None:  # noqa: ANN001 - read.Chunk
        self.chunks.append(chunk)
        self.size += len(chunk.data)
        while len(self.chunks) > 1 and self.size - len(self.chunks[0].data) >= TAIL_BYTES:
            self.size -= len(self.chunks.popleft().data)

    def joined(self, limit: int = JOIN_BYTES) -> tuple[bytes, list[int]]:
        """Each two adjacent lines of the tail's end written as one (the first line's bytes, then
        the second's), one per line, at most ``limit`` and JOIN_BYTES bytes (the last pairs), and
        the number of each pair's first line: a message that a terminal, a forum or a web page
        wrapped in two (``Loaded runtime CuDNN l`` / ``ibrary: 7.4.1 but source was compiled
        with``) reads whole again; a second line that repeats the first one's head (a Compose
        service's ``name  |``, ``[rank0]:``, a traceback's indentation) continues it after that
        head (``glue``). The chunks are kept for ``take``."""
        out: list[bytes] = []
        firsts: list[int] = []
        budget = min(limit, JOIN_BYTES)
        following = b""  # the line after the one looked at (from the next chunk at a chunk's end)
        for chunk in reversed(self.chunks):
            lines = chunk.data.split(b"\n")
            if lines and not lines[-1]:
                lines.pop()
            for n in range(len(lines) - 1, -1, -1):
                line = lines[n].rstrip(b"\r")
                if line.strip() and following.strip() and len(line) + len(following) <= MAX_LINE_CHARS * 4:
                    budget -= len(line) + len(following) + 1
                    if budget < 0:
                        break
                    out.append(glue(line, following))
                    firsts.append(chunk.first_line + n)
                following = line
            if budget < 0:
                break
        out.reverse()
        firsts.reverse()
        return (b"\n".join(out) + b"\n" if out else b""), firsts

    def last_lines(self, count: int) -> list[tuple[int, bytes]]:
        """The input's last ``count`` non-empty lines (number, bytes), in order."""
        out: list[tuple[int, bytes]] = []
        for chunk in reversed(self.chunks):
            lines = chunk.data.split(b"\n")
            for n in range(len(lines) - 1, -1, -1):
                if lines[n].strip():
                    out.append((chunk.first_line + n, lines[n]))
                    if len(out) >= count:
                        return out[::-1]
        return out[::-1]

    def wrap_width(self) -> int:
        """The column a terminal or a page hard-wrapped this input at, or 0 when it was not.

        Hard wrapping cuts every line longer than the width into rows of exactly that width
        (in characters), wherever the cut falls, inside a word as often as not. So: no line is
        longer than the widest, at least ``WRAP_MIN_ROWS`` different rows have that width, and at
        least ``WRAP_MIN_SPLITS`` of them end inside a word that the next row continues (a
        small letter on both sides of the cut: a log line seldom starts with one, and lines of
        one template that share the widest width end in digits or capitals as often as not): a
        two-line paste of one long error is enough. One row cut inside a word is enough at a
        width terminals and mail clients wrap at (``WRAP_COLUMNS``): a one-line error wrapped in
        two. A table that fills a fixed width (nvidia-smi, ibstat) ends its rows with a border or
        a space, not inside a word."""
        # widths in characters: an ASCII chunk's rows are measured as bytes (no decoding, on
        # every input's close), any other chunk is decoded whole once
        rows: list = []
        for chunk in self.chunks:
            data = chunk.data.replace(b"\r\n", b"\n") if b"\r" in chunk.data else chunk.data
            rows += data.split(b"\n") if data.isascii() else data.decode("utf-8", errors="replace").split("\n")
        width = max(map(len, rows), default=0)
        if not WRAP_MIN_WIDTH <= width <= WRAP_MAX_WIDTH:
            return 0
        full: set = set()
        splits = 0
        for i in [i for i, row in enumerate(rows[:-1]) if len(row) == width]:
            row = rows[i]
            if row not in full:  # a line repeated whole is no sign of a wrap
                full.add(row)
                splits += row[-1:].islower() and rows[i + 1][:1].islower()
        if splits < WRAP_MIN_SPLITS:
            return 0
        return width if len(full) >= WRAP_MIN_ROWS or width in WRAP_COLUMNS else 0

    def unwrapped(self, width: int, limit: int) -> tuple[bytes, list[int]]:
        """The tail's lines that a hard wrap at ``width`` cut, written whole again (each row of
        about that width, ``WRAP_SLACK``, joined with the rows that follow it up to a shorter one,
        once glued and once with a space between rows), one per line, at most ``limit`` bytes,
        with the number of each one's first row."""
        out: list[bytes] = []
        firsts: list[int] = []
        for number, rows in self._lines(width):
            if len(rows) > 1:
                # a cut inside a word is undone by gluing the rows; a wrap at a word's end took the
                # space with it: both are read
                for whole in (b"".join(rows), b" ".join(rows)):
                    limit -= len(whole) + 1
                    if limit < 0:
                        return (b"\n".join(out) + b"\n" if out else b""), firsts
                    out.append(whole)
                    firsts.append(number)
        return (b"\n".join(out) + b"\n" if out else b""), firsts

    def _lines(self, width: int = 0) -> Iterator[tuple[int, list[bytes]]]:
        """(number, rows) of each line of the tail (from its first whole line): one row, or with
        ``width`` each row of about that width and the rows it runs on into (``wrap_width``)."""
        skip = max(0, self.size - TAIL_BYTES)  # bytes of the first chunks that lie before the tail
        run: list[bytes] = []
        start = 0
        for chunk in self.chunks:
            data = chunk.data
            if skip >= len(data):
                skip -= len(data)
                continue
            begin = 0
            if skip:  # the tail begins inside this chunk: from the first whole line there
                begin = data.find(b"\n", skip - 1) + 1
                skip = 0
                if begin == 0:
                    continue
            first = chunk.first_line + data.count(b"\n", 0, begin)
            rows = data[begin:].split(b"\n")
            if rows and not rows[-1]:
                rows.pop()
            for n, raw in enumerate(rows):
                if not width:
                    yield first + n, [raw]
                    continue
                if not run:
                    start = first + n
                run.append(raw.rstrip(b"\r"))
                if len(run[-1].decode("utf-8", errors="replace")) >= width - WRAP_SLACK and len(run) * width < MAX_LINE_CHARS * 4:
                    continue
                yield start, run
                run = []
        if run:
            yield start, run

    def take(self, source: int, limit: int, width: int = 0) -> list[Loose]:
        """The distinct error-looking lines of the tail, in input order, at most ``limit``
        (the last ones when there are more); the chunks are let go. In an input hard-wrapped at
        ``width`` the rows of each cut line are taken together, as the line it was."""
        picked: deque[Loose] = deque(maxlen=max(0, limit))
        seen: set[frozenset[str]] = set()
        for number, rows in self._lines(width):
            # a wrapped line is taken glued (a cut inside a word undone) and spaced (a wrap at a
            # word's end took the space); a CR splits a line as the matcher splits it (a progress
            # bar, an escaped log's breaks)
            forms = (rows[0],) if len(rows) == 1 else (b"".join(rows), b" ".join(rows))
            for raw in (piece for line in forms for piece in (line.split(b"\r") if b"\r" in line else (line,))):
                if not raw or len(raw) > MAX_LINE_CHARS * 4:
                    continue
                text = raw.decode("utf-8", errors="replace").strip()
                if len(text) > MAX_LINE_CHARS or not says_wrong(text) or _garbled(text):
                    continue
                ws = words(text)
                if len(ws) < 2 or ws in seen:
                    continue
                seen.add(ws)
                picked.append(Loose(source, number, text, ws))
        self.chunks.clear()
        self.size = 0
        return list(picked)
