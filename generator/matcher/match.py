"""Turn candidate lines into hits: run the signatures and the Xid/SXid parsers on them.

A hit says which entry a line belongs to, with the line number, its text and what the
line tells about where it came from. One line gives at most one hit per entry.

Logs repeat themselves: a flapping PCIe link prints the same corrected-error line a million
times, only the timestamp changes. What a line matched is remembered by the line without its
leading timestamp (and the shape of that timestamp), so a repeated line costs a dictionary
look-up instead of a run of every candidate signature; its timestamp is parsed only if the
hit is kept as evidence.

A chunk made mostly of such lines is read as its distinct lines (``Matcher.batch``): the
scanner gets one copy of each, and a line whose hits would only be counted (``Source`` in
job.py) is counted with the others like it, without a step of Python per line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from operator import getitem
from typing import Callable, Iterator, NamedTuple

from .parse import (SMI_LOOKBACK, XID_TEXTS, Context, parse_context, parse_fallen_gpu, parse_gpu_address, parse_pci,
                    parse_smi_gpu, parse_sxid, parse_time, parse_xid)
from .read import MAX_LINE_BYTES, Chunk
from .rules import compiled
from .scan import MARKERS, LiteralScanner, Scanner

_BLOCK_FIELD = re.compile(r"^\s*(rank|host|exitcode|local_rank|error_file|time)\s*:\s*(.+?)\s*$")
_BLOCK_HEADER = re.compile(r"^\s*\[\d+\]:\s*$")  # '[0]:' opens one failure of a torchrun summary
_BLOCK_END = re.compile(r"^\s*(?:[-=]{8,}|Root Cause|Failures:|\S+ FAILED\s*$)")
_EXITCODE = re.compile(r"exitcode\s*[:=]\s*(-?\d+)")
_SIGNAL = re.compile(r"Signal (\d+) \((SIG[A-Z0-9]+)\)")
EVIDENCE_CHARS = 600
# The volatile head of a log line: the timestamps parse.parse_time reads (uptime, ISO dates,
# bracketed or not, syslog dates, clock times) and nothing else, so that what a line tells of
# its place (a rank prefix such as torchrun's "3: ", an mpirun tag, a host or GPU address made
# of digits) always stays in the memo's key. Group 1: torchrun's rank prefix, kept as it is.
_VOLATILE_HEAD = re.compile(  # on the line's bytes: a repeated line is never decoded
    rb"(\d{1,6}: )?(?:\[ *\d+\.\d+\] *|\[?\d{4}-\d\d-\d\d[T ][\d:.,]{8,18}(?:Z|[+-]\d\d:?\d\d)?\]? *"
    rb"|[A-Z][a-z]{2} [ \d]\d [\d:.]{8,18} *|\d\d:\d\d:\d\d[\d.,]{0,10} *)*+")
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
if XID_TEXTS != ("Xid", "XID ", "xid ", "XID_ERRORS", "xid_errors"):  # Matcher._match_segment writes them out
    raise ImportError("parse.XID_TEXTS changed: update Matcher._match_segment")
MEMO_LINES = 8192  # distinct line bodies remembered; the memory is cleared when full
MEMO_MAX_BYTES = 2048  # longer lines are matched afresh
BATCH_MIN_LINES = 256  # a chunk of fewer lines is not worth reading as its distinct lines


def _memo_key(raw: bytes) -> tuple:
    """The memo's key of a line (without the signatures asked for): its rank prefix, the shape of
    its volatile head (digits as zeros) and the rest of the line."""
    m = _VOLATILE_HEAD.match(raw)
    head = m.end()
    return (m.group(1), raw[:head].translate(_DIGITS_TO_ZERO), raw[head:])


class Batch:
    """A chunk of mostly repeated lines, read as its distinct lines (``Matcher.batch``).

    ``units[i]`` stands for line i of the chunk (``lines[i]``): two lines have the same unit
    exactly when they have the same memo key (so the same hits, but for their place in the log).
    ``lasts`` gives each unit the index of its last line, ``keys`` each unit's memo key (in the
    order of ``lasts``), ``reduced`` that last line of each unit, joined: what the scanner scans
    instead of the chunk; ``starts`` where each of those lines starts in it.
    """

    __slots__ = ("lines", "units", "lasts", "distinct", "keys", "reduced", "starts")

    def __init__(self, lines: list[bytes], units: list, lasts: dict):
        self.lines, self.units, self.lasts = lines, units, lasts
        self.distinct = list(lasts)
        reps = [lines[i] for i in lasts.values()]
        self.keys = [_memo_key(rep) for rep in reps]
        self.reduced = b"\n".join(reps) + b"\n"
        starts, pos = [], 0
        for rep in reps:
            starts.append(pos)
            pos += len(rep) + 1
        self.starts = starts


@dataclass
class Hit:
    line: int
    entry: str
    signature: str | None
    text: str
    context: Context
    fields: dict = field(default_factory=dict)
    pending_time: str | None = None  # the whole line, while its timestamp is not parsed yet (see settle)
    source: int = 0  # which input of the job the line is in (sources[] in the report); line counts within it

    def settle(self) -> "Hit":
        """Parse the line's timestamp, left for later on a repeated line: most such hits are
        only counted, and only those kept as evidence need their time."""
        if self.pending_time is not None:
            self.context.time = parse_time(self.pending_time)
            self.pending_time = None
        return self


class Repeat(NamedTuple):
    """A line the memo answered whose hits need nothing from the lines around it: what it hit
    before (entry, signature, fields, the place the line named), for the tally to count. Most
    such lines are only counted; ``hit`` makes the full Hit of one that is kept as evidence."""

    line: int
    raw: bytes  # the line as read: decoded only if a hit is kept
    known: list  # (entry, signature id, fields, Context) per entry hit

    def hit(self, item: tuple) -> Hit:
        entry, sig_id, fields, ctx = item
        text = self.raw.decode("utf-8", errors="replace")
        return Hit(self.line, entry, sig_id, text.strip()[:EVIDENCE_CHARS], Context(None, ctx.rank, ctx.host, ctx.pci),
                   dict(fields), text)  # the time is parsed (from the whole line) only if the hit is kept


def _surroundings(text: str, hits: list[Hit]) -> str | None:
    """What ``hits_in`` reads around this line for its hits, if anything: the launcher's summary
    block below it ("summary"), nothing but a flag ("agent": the elastic agent's line for the
    worker that failed), the GPU named above it ("fallen", "smi"). Such a line is never answered
    as a Repeat."""
    if "Root Cause (first observed failure)" in text:
        return "summary"
    if "failed (exitcode:" in text and "local_rank:" in text:
        return "agent"
    if "fallen off the bus" in text and "NVRM: The NVIDIA GPU" not in text:
        return "fallen"
    if text[:1] in (" ", "\t") and " : " in text and not any("pci" in h.fields for h in hits):
        return "smi"  # a field of an `nvidia-smi -q` report: the GPU is named in the header above it
    return None


def _line_fields(text: str) -> dict:
    """What a line a signature matched tells besides: the PCI address of the device (and of the GPU
    when the line is the driver's), a GPU named by its bus id, an exit code, a signal."""
    fields = {}
    pci = parse_pci(text) if "NVRM" in text or "pcieport" in text or "nvidia" in text else None
    if pci:
        fields["pci"] = pci
        if "NVRM" in text or "nvidia 0" in text:
            fields["gpu_pci"] = pci  # the GPU itself, not a PCIe port above it
    elif "GPU" in text:
        gpu = parse_gpu_address(text)
        if gpu:
            fields["pci"] = fields["gpu_pci"] = gpu
    m = _EXITCODE.search(text) if "exitcode" in text else None
    if m:
        fields["exitcode"] = int(m.group(1))
    m = _SIGNAL.search(text) if "Signal " in text else None
    if m:
        fields["signal"] = m.group(2)
    return fields


class _LazyPattern:
    """A signature compiled when a line first needs it: the browser starts without compiling
    hundreds of patterns a given log never reaches (their check happened when the site was built)."""

    __slots__ = ("pattern", "ignore_case", "compiled")

    def __init__(self, pattern: str, ignore_case: bool):
        self.pattern, self.ignore_case, self.compiled = pattern, ignore_case, None

    def search(self, text: str):  # noqa: ANN201 - re.Match | None
        if self.compiled is None:
            self.compiled = compiled(self.pattern, self.ignore_case)
        return self.compiled.search(text)


class Matcher:
    """Everything needed to find hits, compiled once from a rules document."""

    batching = True  # read chunks of repeated lines as batches (job.Source); False: line by line (tests compare)

    def __init__(self, rules: dict, scanner: Scanner | None = None, lazy: bool = False):
        self.rules = rules
        self.xid_entries: dict[int, str] = {int(k): v for k, v in rules["xid_entries"].items()}
        self.sxid_entries: dict[str, str] = rules.get("sxid_entries", {})
        # entries of severity info: a line one of them matches is that note's line (see _match_line)
        self.notes = frozenset(k for k, v in rules["entries"].items() if v.get("severity") == "info")
        self.signatures = []
        index: dict[tuple[str, bool], list[int]] = {}
        for i, sig in enumerate(rules["signatures"]):
            literals = [lit.lower() if sig["ignore_case"] else lit for lit in sig["literals"]]
            rx = _LazyPattern(sig["pattern"], sig["ignore_case"]) if lazy else compiled(sig["pattern"], sig["ignore_case"])
            self.signatures.append((sig["entry"], sig["id"], rx, literals, sig["ignore_case"]))
            for literal in sig["literals"]:
                index.setdefault((literal, sig["ignore_case"]), []).append(i)
        # literal -> signatures that need it: a line runs only the regexes whose literal it contains
        self.literal_index = [(lit, ci, idxs) for (lit, ci), idxs in index.items()]
        self.any_folded = any(ci for _, ci, _ in self.literal_index)
        self.anchors = [(a["text"], a["ignore_case"]) for a in rules["anchors"]]
        self.anchor_signatures = [frozenset(a["signatures"]) for a in rules["anchors"]]
        self.patterns = [(sig["pattern"], sig["ignore_case"], sig["literals"]) for sig in rules["signatures"]]
        self._scanner: Scanner | None = scanner
        # line body -> (its hits need no other line, [(entry, signature, fields, Context)])
        self.memo: dict[tuple, tuple[bool, list[tuple[str, str | None, dict, Context]]]] = {}

    @property
    def scanner(self) -> Scanner:
        """The literal prefilter: the one given or set, else the pure-Python scanner, built on first
        use (a Diagnoser with a scanner factory sets its own first: the browser never builds it)."""
        if self._scanner is None:
            self._scanner = LiteralScanner(self.anchors)
        return self._scanner

    @scanner.setter
    def scanner(self, scanner: Scanner) -> None:
        self._scanner = scanner

    @property
    def ahead(self) -> int:
        """How many chunks the scanner scans in the background while an earlier one is read
        (``ahead`` and ``submit`` of the scanner; 0: it scans when asked)."""
        return getattr(self.scanner, "ahead", 0)

    def scan_soon(self, data: bytes) -> Callable[[], tuple[list, frozenset[bytes], list | None]]:
        """Start scanning ``data``; the result, called, gives its candidate lines, which of the
        readers' MARKERS it holds, and where its progress lines start (None: not looked for).
        A scanner without ``submit`` scans now, and the markers are searched with ``in``."""
        submit = getattr(self.scanner, "submit", None)
        if submit is not None:
            return submit(data).result
        result = (self.scanner.candidate_lines(data), frozenset(m for m in MARKERS if m in data), None)
        return lambda: result

    def batch(self, data: bytes) -> Batch | None:
        """``data`` (a chunk) as its distinct lines when at most half of its lines have a memo key
        of their own; None otherwise, or when a line of it is not one the memo takes (a carriage
        return, over MEMO_MAX_BYTES). A few C-level passes over the chunk, a Python step per
        distinct shape of line.

        Lines that repeat as they are are their own units. Otherwise a line's shape (its digits
        as zeros) tells where its volatile head and rank prefix end, as the head's syntax sees
        a digit only as a digit: the shape, the line after its head and its rank prefix (when
        there is one) make its unit, which two lines share exactly when they share a memo key."""
        if b"\r" in data:
            return None
        lines = data.split(b"\n")
        if data[-1:] == b"\n":
            lines.pop()
        n = len(lines)
        if n < BATCH_MIN_LINES or max(map(len, lines)) > MEMO_MAX_BYTES:
            return None
        if len(set(lines[:BATCH_MIN_LINES])) * 2 <= BATCH_MIN_LINES:  # lines repeated as they are: their own units
            lasts = dict(zip(lines, range(n)))
            if len(lasts) * 2 <= n:
                return Batch(lines, lines, lasts)
        shapes = data.translate(_DIGITS_TO_ZERO).split(b"\n")
        if data[-1:] == b"\n":
            shapes.pop()
        heads: dict = dict.fromkeys(shapes)  # shape -> where the line after its head starts
        if len(heads) * 2 > n:
            return None
        prefixes: dict = {}  # shape -> where its rank prefix ends
        for shape in heads:
            m = _VOLATILE_HEAD.match(shape)
            heads[shape] = slice(m.end(), None)
            prefixes[shape] = slice(0, max(m.end(1), 0))
        if not any(cut.start for cut in heads.values()):
            units: list = lines
        else:
            bodies = map(getitem, lines, map(heads.__getitem__, shapes))
            if any(cut.stop for cut in prefixes.values()):
                units = list(zip(shapes, bodies, map(getitem, lines, map(prefixes.__getitem__, shapes))))
            else:
                units = list(zip(shapes, bodies))
        lasts = dict(zip(units, range(n)))
        if len(lasts) * 2 > n:
            return None
        return Batch(lines, units, lasts)

    def wanted(self, anchors: frozenset[int] | None) -> frozenset[int] | None:
        """The signatures to try on a candidate line whose scanner result is ``anchors``."""
        if anchors is None:
            return None
        if getattr(self.scanner, "names_signatures", False):  # the scanner names the signatures that matched
            return anchors
        # only the signatures listed under the anchors on this line
        return frozenset().union(*(self.anchor_signatures[i] for i in anchors))

    def known(self, key: tuple, anchors: frozenset[int] | None) -> tuple | None:
        """What the memo holds for a line of memo key ``key`` (``Batch.keys``) and scanner result
        ``anchors``: (its hits need no other line, [(entry, signature, fields, Context)]), or None."""
        return self.memo.get((*key, self.wanted(anchors)))

    def hits_in(self, chunk: Chunk, candidates: list, line: int = -1) -> Iterator[Hit | Repeat]:
        """The hits on a chunk's candidate lines (from ``scan_soon``); a repeated line whose hits
        need nothing from the lines around it comes as one Repeat (``Source._add`` counts it).
        ``line``: the number of the first candidate's line, when the caller knows it."""
        by_signature = getattr(self.scanner, "names_signatures", False)
        data = chunk.data
        cursor = -1
        for start, end, anchors in candidates:
            if cursor >= 0:
                line += data.count(b"\n", cursor, start)
            elif line < 0:
                line = chunk.line_at(start)
            cursor = start
            raw = data[start:min(end, start + MAX_LINE_BYTES)]
            wanted = None
            if anchors is not None and by_signature:  # the scanner names the signatures that matched
                wanted = anchors
            elif anchors is not None:  # only the signatures listed under the anchors on this line
                wanted = frozenset().union(*(self.anchor_signatures[i] for i in anchors))
            found = self.match_line(raw, line, wanted)
            if not found:
                continue
            if type(found) is Repeat:
                yield found
                continue
            text = raw.decode("utf-8", errors="replace")
            around = _surroundings(text, found)
            if around == "summary":
                block = self._block_fields(data, end)
                for h in found:
                    h.fields.update(block)
                    h.fields["first_failure"] = True  # torchelastic names the first failing worker here
                    if "rank" in block and h.context.rank is None:
                        h.context.rank = block["rank"]
                    if "host" in block and not h.context.host:
                        h.context.host = block["host"]
            elif around == "agent":
                for h in found:
                    h.fields["first_failure"] = True
            elif around == "fallen":
                gpu = parse_fallen_gpu(data[max(0, start - 400):start].decode("utf-8", errors="replace"))
                for h in found:
                    if gpu and "pci" not in h.fields:
                        h.fields["pci"] = h.fields["gpu_pci"] = h.context.pci = gpu
            elif around == "smi":
                gpu = parse_smi_gpu(data[max(0, start - SMI_LOOKBACK):start].decode("utf-8", errors="replace"))
                if gpu:
                    for h in found:
                        h.fields["pci"] = h.fields["gpu_pci"] = h.context.pci = gpu
            yield from found

    def match_line(self, raw: bytes, line: int, wanted: frozenset[int] | None = None) -> list[Hit] | Repeat:
        """Hits for one line (its bytes); progress-bar carriage returns split it into segments.
        A line the memo answered comes back as a Repeat when its hits need nothing from the
        lines around it (and is not even decoded).

        ``wanted`` limits the signatures tried (the scanner knows which anchors the line has).
        """
        if b"\r" in raw or len(raw) > MEMO_MAX_BYTES:
            return self._match_line(raw.decode("utf-8", errors="replace"), line, wanted)
        m = _VOLATILE_HEAD.match(raw)
        head = m.end()
        key = (m.group(1), raw[:head].translate(_DIGITS_TO_ZERO), raw[head:], wanted)
        known = self.memo.get(key)
        if known is None:
            text = raw.decode("utf-8", errors="replace")
            hits = self._match_line(text, line, wanted)
            if len(self.memo) >= MEMO_LINES:
                self.memo.clear()
            # copies: the caller may still add what the lines around this one tell (a launcher's summary)
            self.memo[key] = (_surroundings(text, hits) is None,
                              [(h.entry, h.signature, dict(h.fields), Context(None, h.context.rank, h.context.host, h.context.pci))
                               for h in hits])
            return hits
        alone, items = known
        if not items:
            return []
        repeat = Repeat(line, raw, items)
        return repeat if alone else [repeat.hit(item) for item in items]

    def _match_line(self, text: str, line: int, wanted: frozenset[int] | None) -> list[Hit]:
        segments = [s for s in text.split("\r") if s.strip()] if "\r" in text else [text]
        context: Context | None = None  # parsed only for lines that hit something
        by_entry: dict[str, Hit] = {}
        for segment in segments:
            matched = list(self._match_segment(segment, wanted))
            if len(matched) > 1 and any(m[0] in self.notes for m in matched):
                # A note was written for this very text: a harmless warning that quotes a
                # failure's words (XLA's "Unable to enable peer access ... CUDA_ERROR_PEER_ACCESS_
                # UNSUPPORTED", logged before it carries on). The failure signatures that match
                # the quoted words do not make it a failure.
                matched = [m for m in matched if m[0] in self.notes]
            for entry, sig_id, fields in matched:
                if entry in by_entry:
                    by_entry[entry].fields.update({k: v for k, v in fields.items() if k not in by_entry[entry].fields})
                    continue
                if context is None:
                    context = parse_context(segments[0])
                ctx = Context(context.time, context.rank, context.host, fields.get("pci") or context.pci)
                by_entry[entry] = Hit(line, entry, sig_id, segment.strip()[:EVIDENCE_CHARS], ctx, dict(fields))
        return list(by_entry.values())

    def _match_segment(self, text: str, wanted: frozenset[int] | None = None) -> Iterator[tuple[str, str | None, dict]]:
        # any of XID_TEXTS (written out: a chain of `in` costs half a generator over them)
        if "Xid" in text or "XID " in text or "xid " in text or "XID_ERRORS" in text or "xid_errors" in text:
            if "SXid" in text:
                event = parse_sxid(text)
                if event:
                    kind = "fatal" if event.fatal else "nonfatal"
                    entry = self.sxid_entries.get(kind)
                    if entry:
                        yield entry, None, {"sxid": event.code, "pci": event.pci, "switch": event.switch}
            else:
                event = parse_xid(text)
                if event:
                    fields: dict = {"xid": event.code, "pci": event.pci or None, "gpu_pci": event.pci or None}
                    if event.device:
                        fields["gpu_uuid"] = event.device
                    if event.pid is not None:
                        fields["pid"] = event.pid
                    if event.process:
                        fields["process"] = event.process
                    if event.caused_by is not None:
                        fields["caused_by_xid"] = event.caused_by
                    if event.recovery_action:
                        fields["recovery_action"] = event.recovery_action
                    if event.nvlink:
                        fields["nvlink"] = event.nvlink
                    yield self.xid_entries.get(event.code, f"xid-{event.code}"), None, fields
        if not wanted and wanted is not None:
            return
        lowered = text.lower() if self.any_folded else text
        told: dict | None = None  # what the line tells, the same for every signature that matches it
        if wanted is None:
            found: set[int] = set()
            for literal, folded, idxs in self.literal_index:
                if literal in (lowered if folded else text):
                    found.update(idxs)
            wanted = frozenset(found)
        for i in sorted(wanted):
            entry, sig_id, rx, literals, folded = self.signatures[i]
            if not any(map((lowered if folded else text).__contains__, literals)):
                continue  # the line has the anchor but not this signature's own literal
            if rx.search(text):
                if told is None:
                    told = _line_fields(text)
                yield entry, sig_id, dict(told)

    @staticmethod
    def _block_fields(data: bytes, end: int, lines: int = 12) -> dict:
        """Fields of a torchelastic 'Root Cause (first observed failure)' block below ``end``.

        The block is the indented ``key : value`` lines under its ``[N]:`` header; it ends at
        a rule (``----``, ``====``), a second header or the next summary's headings, so the
        fields of the next summary in the log are never taken for this one's.
        """
        fields: dict = {}
        pos = end + 1
        headers = 0
        for _ in range(lines):
            if pos >= len(data):
                break
            nl = data.find(b"\n", pos)
            nl = len(data) if nl < 0 else nl
            text = data[pos:nl].decode("utf-8", errors="replace")
            pos = nl + 1
            m = _BLOCK_FIELD.match(text)
            if not m:
                if _BLOCK_HEADER.match(text):
                    headers += 1
                    if headers > 1:
                        break  # the next failure of the same summary
                elif _BLOCK_END.match(text):
                    break
                continue  # another process's line in between, a traceback field
            key, value = m.groups()
            if key in fields:
                continue
            if key in ("rank", "exitcode"):
                num = re.match(r"(-?\d+)", value)
                if num:
                    fields[key] = int(num.group(1))
            elif key in ("host", "time"):
                fields[key] = value
        return fields
