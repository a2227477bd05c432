"""One diagnosis for a whole job: many inputs (files, archive members, standard input) at once.

Each input is a source: its lines are numbered within it, its path gives a host and rank
where its lines do not say (``sources.describe``), and every hit keeps which source it came
from. All sources fold into one tally, so the root cause is chosen across all of them: the
earliest failure that explains the others, by the corpus's cause edges and by time where the
clocks compare (dated lines across inputs, uptime only within its own input).

Archives and compressed files are read through (``unpack``), archives inside archives too,
each member its own source. A source that cannot be read through (a damaged archive, one past
the unpack limits) ends with a note in the report; what was read before stays counted. A
damaged member inside an archive, or an archive nested too deep, is a note too, and the
archive's other members are still read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from operator import itemgetter
from typing import Iterable

from .artefacts import (MAX_DUMP_BYTES, ArtefactError, PySpyReader, StallReader, analyse_spy, analyse_stalls,
                        analyse_traces, analyse_watchdogs, is_pickle, load_plain_pickle, read_flight_recorder,
                        read_json_dump)
from .cut import LOOK_BACK as CUT_LOOK_BACK
from .cut import ends_in_traceback
from .match import BATCH_MIN_LINES, Batch, Hit, Repeat
from .parse import parse_boot
from .progress import ProgressTracker
from .rank import Tally, merge_tallies
from .read import Chunk, ChunkReader, InputStats
from .report import build
from .resemble import JOIN_JOB_BYTES, MAX_LINES, TailLines
from .scan import MARKERS
from .sources import SourceInfo, describe
from .unpack import MAX_MEMBERS, MAX_UNPACKED, Unpacker, UnpackError


class Source:
    """One input being read: its reader, its counts, and what its path says."""

    def __init__(self, job: "Job", index: int, info: SourceInfo):
        self.job = job
        self.index = index
        self.info = info
        self.stats = InputStats()
        self.reader = ChunkReader(self.stats)
        self.progress = job.progress.source(index, info)
        self.closed = False
        # "pickle": a flight recorder dump, kept whole and not read as text; "json": a .json input
        # that may be one (kept whole and also read as text: journald exports are JSON too)
        self.kind: str | None = None
        self.dump = bytearray()
        self.spy: PySpyReader | None = None
        self.pending: list = []  # chunks handed to the scanner, not read yet (see _chunks)
        self.repetitive = False  # the last chunk read was mostly repeated lines: the next are batched
        self.backoff = 0  # chunks still read line by line after a failed batch (doubles with each failure)
        self.failed = 0
        self.tail = TailLines()  # its last lines, for the closest wording when nothing matched

    def feed(self, block: bytes) -> int:
        """Take the next piece of this input; returns its bytes seen so far."""
        data = bytes(block)
        if self.kind is None and data:
            self.kind = "pickle" if is_pickle(data) else (
                "json" if self.info.name.endswith(".json") and data.lstrip()[:1] == b"{" and b'"entries"' in data else "text")
        if self.kind in ("pickle", "json") and len(self.dump) + len(data) <= MAX_DUMP_BYTES + 1:
            self.dump += data
        if self.kind == "pickle":
            self.stats.bytes += len(data)
            return self.stats.bytes
        self._chunks(self.reader.feed(data))
        return self.stats.bytes

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.kind != "pickle":
            self._chunks(self.reader.close())
            self._read_pending(0)
            # the tail's row widths are measured on every input (as bytes when ASCII): a
            # hard-wrapped tail is read again with its cut lines whole. Otherwise the tail serves
            # only a job without a cause found (findings only grow; a wrapper's "a worker failed"
            # names none): its lines read joined may still find one (a wrapped line); if not, its
            # error-looking lines are kept for the closest wording. Once a cause is found it is
            # not decoded, which spares most logs
            width = self.tail.wrap_width()
            if width:  # hard-wrapped: its cut lines are read whole, whatever was found already
                self._read_joined(*self.tail.unwrapped(width, self.job.join_left), new_only=True)
            elif not self.job.tally.has_cause():
                self._read_joined(*self.tail.joined(self.job.join_left))
            # said only when no failure is found, and findings only grow: not looked for once one is
            cut = None if self.job.tally.has_failure() else ends_in_traceback(self.tail.last_lines(CUT_LOOK_BACK))
            if cut is not None:
                self.job.cuts.append(f"{self.info.name}: the log stops inside a Python traceback (line {cut}), before "
                                     "the line that names the exception (a traceback's last line says what failed); "
                                     "copy the log through that line and diagnose it again")
            room = MAX_LINES - len(self.job.loose)
            if self.job.tally.has_cause():
                self.job.loose = []
            elif room > 0:
                self.job.loose.extend(self.tail.take(self.index, room, width))
            self.tail = TailLines()
        if self.kind == "pickle":
            self._flight_recorder(lambda: load_plain_pickle(bytes(self.dump)))
        elif self.kind == "json" and len(self.dump) <= MAX_DUMP_BYTES:
            self._flight_recorder(lambda: read_json_dump(bytes(self.dump)))
        self.dump = bytearray()

    def _read_joined(self, data: bytes, firsts: list[int], new_only: bool = False) -> None:
        """Read lines written whole again: with no cause found so far, the end of this input
        with each two adjacent lines joined (TailLines.joined: a failure line wrapped in two is
        found whole; only failures not found yet count, a note or a wrapper matched here was
        matched on its own line); in a
        hard-wrapped input, every line the wrap cut (TailLines.unwrapped), where ``new_only``
        keeps only findings, failures or notes, not found yet (a row that holds the whole match
        was read as it is). A hit keeps the first line's number with the second in
        ``fields["joined"]``."""
        self.job.join_left -= len(data)
        if not data:
            return
        matcher = self.job.diagnoser.matcher
        candidates = matcher.scan_soon(data)()[0]
        seen = set(self.job.tally.findings)  # a wrapper found on its own line is not counted again
        for found in matcher.hits_in(Chunk(data, 0), candidates):
            hits = [found.hit(item) for item in found.known] if type(found) is Repeat else [found]
            for hit in hits:
                if (hit.entry in self.job.tally.findings) if new_only else (hit.entry in matcher.notes or hit.entry in seen):
                    continue
                hit.settle()
                hit.line = firsts[hit.line]
                hit.fields["joined"] = hit.line + 1
                self._add_hit(hit)

    def _learn_boot(self, data: bytes) -> None:
        """The boot time from the first line that shows a clock time and the kernel's uptime together."""
        pos = data.find(b"kernel: [")
        while pos >= 0:
            start = data.rfind(b"\n", 0, pos) + 1
            end = data.find(b"\n", pos)
            boot = parse_boot(data[start:end if end >= 0 else len(data)].decode("utf-8", errors="replace"))
            if boot:
                self.job.boots[self.index] = boot
                return
            pos = data.find(b"kernel: [", pos + 9)

    def _flight_recorder(self, load) -> None:  # noqa: ANN001
        try:
            self.job.traces.extend(read_flight_recorder(load(), self.index, self.info.rank))
        except ArtefactError as exc:
            self.job.notes.append(f"{self.info.name}: {exc}")

    def _chunks(self, chunks: list) -> None:
        """Read chunks. A scanner that scans in the background (the CLI's Hyperscan) is handed
        each chunk at once and the chunk is read once ``ahead`` later ones are in its hands, so
        that their scans run while it is read; with any other scanner each chunk is read now.

        After a chunk made mostly of repeated lines (a flapping link, a crash loop), the next
        ones are tried as batches (``Matcher.batch``): the scanner scans one copy of each
        distinct line and ``_add_batch`` counts the lines like it; a chunk that is not such a
        batch is read as usual and ends the trial."""
        matcher = self.job.diagnoser.matcher
        for chunk in chunks:
            batch = None
            if self.backoff:
                self.backoff -= 1
            elif self.repetitive and matcher.batching:
                batch = matcher.batch(chunk.data)
                self.repetitive = batch is not None
                if batch is None:  # a trial that failed costs about as much as a chunk of candidate lines
                    self.failed = min(2 * self.failed + 1, 64)
                    self.backoff = self.failed
                else:
                    self.failed = 0
            self.pending.append((chunk, batch, matcher.scan_soon(chunk.data if batch is None else batch.reduced)))
        self._read_pending(matcher.ahead)

    def _read_pending(self, keep: int) -> None:
        """Read the pending chunks, in order, until ``keep`` are left."""
        while len(self.pending) > keep:
            chunk, batch, result = self.pending.pop(0)
            self._read(chunk, batch, *result())

    def _read(self, chunk, batch: Batch | None, candidates: list, markers: frozenset[bytes],  # noqa: ANN001
              progress: list | None) -> None:
        """Everything one chunk tells: progress, stall reports, boot time, py-spy dumps, hits.
        ``progress``: where progress lines start, when the scanner found them (else None).
        With a ``batch``, the scanner saw the chunk's distinct lines only: markers and progress
        lines are looked for in the chunk itself."""
        data = chunk.data
        if batch is not None:
            markers, progress = frozenset(m for m in MARKERS if m in data), None
        self.progress.feed([chunk], progress)
        if b" ranks: " in markers:
            self.job.stalls.chunk(data)
        if b"kernel: [" in markers and self.index not in self.job.boots:
            self._learn_boot(data)
        if b'"MainThread"' in markers or self.spy is not None:
            if self.spy is None:
                self.spy = PySpyReader(self.index)
                self.job.spies.append(self.spy)
            for line in data.decode("utf-8", errors="replace").splitlines():
                self.spy.line(line)
        if batch is not None:
            self._add_batch(chunk, batch, candidates)
        else:
            repeats = self._add(self.job.diagnoser.matcher.hits_in(chunk, candidates))
            lines = chunk.lfs if chunk.lfs >= 0 else data.count(b"\n")
            self.repetitive = repeats >= BATCH_MIN_LINES and repeats * 4 >= lines
        self.tail.add(chunk)

    def _add(self, hits: Iterable[Hit | Repeat]) -> int:
        """Fold hits into the tally; returns how many were Repeats (lines the memo answered)."""
        tally = self.job.tally
        repeats = 0
        for hit in hits:
            if type(hit) is Repeat:  # a repeated line: counted where it was seen before, a Hit only if kept
                repeats += 1
                for item in hit.known:
                    fields = item[2]
                    place = (*self._host_rank(item[3]), fields.get("gpu_pci"))
                    if "caused_by_xid" in fields or not tally.add_again(item[0], hit.line, place):
                        self._add_hit(hit.hit(item))
                continue
            self._add_hit(hit)
        return repeats

    def _counters(self, known: tuple | None) -> list | None:
        """For a line the memo answered with ``known``: where each of its hits would be counted
        by ``Tally.add_again`` alone (an empty list: it hits nothing), or None when the line must
        be read one by one (not in the memo, its hits need the lines around it, an evidence or a
        place not full yet, the driver's "caused by previous Xid")."""
        if known is None:
            return None
        alone, items = known
        if not items:
            return []
        if not alone:
            return None
        counters = []
        for entry, _sig, fields, ctx in items:
            if "caused_by_xid" in fields:
                return None
            counter = self.job.tally.counter(entry, (*self._host_rank(ctx), fields.get("gpu_pci")))
            if counter is None:
                return None
            counters.append(counter)
        return counters

    def _add_batch(self, chunk: Chunk, batch: Batch, candidates: list) -> None:
        """Fold in the hits of a chunk read as a batch: the same tally as ``_add`` over every
        line in order. A line whose hits would only be counted (``_counters``) is counted with
        the others of its kind; the others are read one by one, in order, until every kind of
        line is only counted; the rest of the chunk is then counted in a few C-level passes.
        Counts waiting are added before a line read one by one, so that the last line of each
        finding and place is the same as line by line."""
        matcher = self.job.diagnoser.matcher
        index = {start: j for j, start in enumerate(batch.starts)}
        if not all(start in index for start, _end, _anchors in candidates):  # not lines of the batch: a scanner of its own kind
            self._add(matcher.hits_in(chunk, matcher.scan_soon(chunk.data)()[0]))
            return
        named = {}  # unit -> (memo key, scanner result), for the candidate lines' units
        for start, _end, anchors in candidates:
            j = index[start]
            named[batch.distinct[j]] = (batch.keys[j], anchors)
        state: dict = {}  # unit -> [lines waiting, index of the last, counters] or nothing; others: read line by line
        nothing = _NOTHING  # a unit whose lines hit nothing

        def settle(unit) -> list | object | None:  # noqa: ANN001
            found = named.get(unit)
            if found is None:
                return nothing
            counters = self._counters(matcher.known(*found))
            return None if counters is None else ([0, 0, counters] if counters else nothing)

        open_units = 0
        for unit in batch.distinct:
            kind = settle(unit)
            if kind is None:
                open_units += 1
            else:
                state[unit] = kind
        units, lines, first = batch.units, batch.lines, chunk.first_line
        waiting: list[list] = []
        done = 0  # lines before this one are folded in or waiting
        if open_units:
            pos = at = 0  # where line ``at`` starts in the chunk
            for i, unit in enumerate(units):
                kind = state.get(unit)
                if kind is None:  # read as _add would: in order, after what waits
                    if waiting:
                        _count(waiting, first)
                    pos += sum(map(len, lines[at:i])) + i - at
                    at = i
                    self._add(matcher.hits_in(chunk, [(pos, pos + len(lines[i]), named[unit][1])], first + i))
                    kind = settle(unit)
                    if kind is not None:
                        state[unit] = kind
                        open_units -= 1
                        if not open_units:
                            done = i + 1
                            break
                elif kind is not nothing:
                    if not kind[0]:
                        waiting.append(kind)
                    kind[0] += 1
                    kind[1] = i
            else:
                done = len(units)
        rest = units[done:] if done else units
        if rest:
            lasts = batch.lasts  # a unit's last line is among the rest if any of its lines is
            for unit, count in Counter(rest).items():
                kind = state[unit]
                if kind is not nothing:
                    if not kind[0]:
                        waiting.append(kind)
                    kind[0] += count
                    kind[1] = lasts[unit]
        if waiting:
            _count(waiting, first)

    def _host_rank(self, ctx) -> tuple:  # noqa: ANN001 - parse.Context
        """The host and rank of a line: what it says itself, else what this input's path says."""
        return (ctx.host if ctx.host is not None else self.info.host or None,
                ctx.rank if ctx.rank is not None else self.info.rank)

    def _add_hit(self, hit: Hit) -> None:
        hit.source = self.index
        hit.context.host, hit.context.rank = self._host_rank(hit.context)
        self.job.tally.add(hit)


_NOTHING = object()  # Source._add_batch: a kind of line that hits nothing


def _count(waiting: list[list], first: int) -> None:
    """Add the lines waiting in each batch kind ([lines, index of the last, counters]) to the
    tally, in the order of their last lines, so that each finding and place ends at the latest."""
    waiting.sort(key=itemgetter(1))
    for kind in waiting:
        Tally.count(kind[2], kind[0], first + kind[1])
        kind[0] = 0
    waiting.clear()


class Job:
    """Feed sources one after another (or interleaved), then ``finish`` for one report."""

    def __init__(self, diagnoser, max_unpacked: int = MAX_UNPACKED, max_members: int = MAX_MEMBERS):  # noqa: ANN001
        self.diagnoser = diagnoser
        self.tally = Tally(diagnoser.ranker)
        self.progress = ProgressTracker()
        self.sources: list[Source] = []
        self.notes: list[str] = []
        self.cuts: list[str] = []  # inputs that stop inside a traceback: said when no failure is found
        self.traces: list = []  # flight recorder state per rank and process group
        self.spies: list[PySpyReader] = []  # py-spy dumps found in the inputs
        self.stalls = StallReader()  # ranks named by stall reports (Horovod)
        self.boots: dict[int, tuple[str, float]] = {}  # per input, the boot time its lines reveal
        self.loose: list = []  # error-looking lines of the inputs' tails (resemble.Loose), in input order
        self.join_left = JOIN_JOB_BYTES  # joined lines still to read (Source._read_joined)
        self.max_unpacked = max_unpacked
        self.max_members = max_members

    def source(self, name: str) -> Source:
        """A new plain source (lines as they come, no unpacking)."""
        src = Source(self, len(self.sources), describe(name))
        self.sources.append(src)
        return src

    def archive(self, name: str) -> "ArchiveFeed":
        """A new input that may be compressed or an archive: each member becomes a source."""
        return ArchiveFeed(self, name)

    def read(self, name: str, stream, block: int = 1 << 20) -> None:  # noqa: ANN001 - a binary file object
        """Read a whole input through; a damaged or oversized archive ends in a note, not an exception."""
        feed = self.archive(name)
        try:
            while data := stream.read(block):
                feed.feed(data)
            feed.close()
        except UnpackError as exc:
            feed.abandon()
            self.notes.append(str(exc))

    def partial(self) -> "Partial":
        """What this job found so far, small and picklable: a worker process sends it to the
        parent, which folds it in with ``merge`` (every source closed first)."""
        for src in self.sources:
            src.close()
        tally = self.tally
        tally.entries = tally.xid_entries = None  # the parent has them
        return Partial(tally, self.progress, [(s.info, s.stats) for s in self.sources], self.notes, self.traces,
                       [t for spy in self.spies for t in spy.threads], self.stalls, self.boots, self.loose, self.cuts)

    def merge(self, part: "Partial") -> None:
        """Fold in a partial diagnosis of other inputs (numbered from 0 there); they become the
        next sources here, so merging in input order numbers every source as one process would."""
        offset = len(self.sources)
        merge_tallies(self.tally, part.tally, offset)
        self.progress.merge(part.progress, offset)
        for trace in part.traces:
            trace.source += offset
        self.traces.extend(part.traces)
        if part.threads:
            merged = PySpyReader(-1)
            for thread in part.threads:
                thread.source += offset
            merged.threads = part.threads
            self.spies.append(merged)
        self.stalls.merge(part.stalls)
        self.boots.update({offset + i: boot for i, boot in part.boots.items()})
        self.notes.extend(part.notes)
        self.cuts.extend(part.cuts)
        for loose in part.loose[:max(0, MAX_LINES - len(self.loose))]:
            loose.source += offset
            self.loose.append(loose)
        self.sources.extend(FinishedSource(offset + i, info, stats) for i, (info, stats) in enumerate(part.sources))

    def finish(self) -> dict:
        for src in self.sources:
            src.close()
        place_on_clock(self.tally, self.boots)
        findings = self.diagnoser.ranker.rank(self.tally)
        watchdogs = analyse_watchdogs(findings)
        stats = InputStats()
        for src in self.sources:
            stats.lines += src.stats.lines
            stats.bytes += src.stats.bytes
            stats.cut_lines += src.stats.cut_lines
            stats.binary += src.stats.binary
            stats.cr_lines += src.stats.cr_lines
        hosts = {src.index: src.info.host for src in self.sources}
        artefacts = {k: v for k, v in (("flight_recorder", analyse_traces(self.traces)),
                                       ("py_spy", analyse_spy([t for s in self.spies for t in s.threads], hosts)),
                                       ("stalls", analyse_stalls([self.stalls])),
                                       ("watchdogs", watchdogs)) if v}
        progress = self.progress.summary(findings)
        resembles = []
        calm = not (progress and progress["hang"]) and not artefacts
        quiet = calm and not self.tally.has_failure()
        # a wrapper ("a worker failed", the shell's "Segmentation fault") names no cause: a log
        # whose only failures are wrappers still gets the closest wording of its error lines
        unexplained = calm and not self.tally.has_cause()
        if unexplained and self.loose:  # the index is built only for a log with error lines and no cause
            resembles = self.diagnoser.resembler.closest(self.loose)
        notes = self.notes + self.cuts if quiet else self.notes
        return build(findings, stats, self.diagnoser.site_url, sources=self.sources, notes=notes,
                     progress=progress, artefacts=artefacts or None, resembles=resembles,
                     entries=self.diagnoser.rules["entries"])


@dataclass
class Partial:
    """A job's findings without its readers (see ``Job.partial``)."""

    tally: Tally
    progress: ProgressTracker
    sources: list  # (SourceInfo, InputStats) per source
    notes: list[str]
    traces: list
    threads: list
    stalls: StallReader
    boots: dict[int, tuple[str, float]]
    loose: list
    cuts: list[str]


class FinishedSource:
    """A source read elsewhere (in a worker process): what the report needs of it."""

    def __init__(self, index: int, info: SourceInfo, stats: InputStats):
        self.index, self.info, self.stats = index, info, stats

    def close(self) -> None:
        """Nothing left to read."""


def place_on_clock(tally: Tally, boots: dict[int, tuple[str, float]]) -> None:
    """Uptime stamps of an input whose lines reveal its boot time become clock times, so dmesg
    lines take their place on the job's timeline (without a boot time they stay per input)."""
    if not boots:
        return
    for f in tally.findings.values():
        for h in [*f.hits, *(p[3] for p in f.places.values()), f.first_failure]:
            if h is None or h.source not in boots:
                continue
            h.settle()
            t = h.context.time
            if t and t[0] == "uptime":
                kind, boot = boots[h.source]
                h.context.time = (kind, boot + t[1])


class ArchiveFeed:
    """An input read through its container: members become sources named ``archive!member``."""

    def __init__(self, job: Job, name: str):
        self.job = job
        self.name = name
        self.unpacker = Unpacker(name, job.max_unpacked, job.max_members)
        self.current: Source | None = None
        self.named = False  # a source of the job carries this input's name (or one of its members')

    def feed(self, data: bytes) -> None:
        self._handle(self.unpacker.feed(data))

    def close(self) -> None:
        self._handle(self.unpacker.close())
        self._name_unread()

    def abandon(self) -> None:
        """Stop here (after an error): the member being read is closed with what it had."""
        if self.current is not None:
            self.current.close()
            self.current = None
        self._name_unread()

    def _name_unread(self) -> None:
        """An input that ends with nothing read out of it (xz data refused, gzip data that is not
        gzip, a zip of folders only) is still one of the job's inputs: a source of 0 lines under its
        own name, as an empty file is, so the report counts and names it (with no source at all,
        the report's one source would be the nameless ``input``, which means standard input)."""
        if not self.named:
            self.named = True
            self.job.source(self.name).close()

    def _handle(self, events) -> None:  # noqa: ANN001 - iterator of (kind, value)
        for kind, value in events:
            if kind == "begin":
                member = str(value)
                name = f"{self.name}!{member}" if member else self.name
                self.current = self.job.source(name)
                self.named = True
            elif kind == "data":
                assert self.current is not None
                self.current.feed(value)  # type: ignore[arg-type]
            elif kind == "end" and self.current is not None:
                self.current.close()
                self.current = None
            elif kind == "note":  # a member not read (damaged, or an archive nested too deep); the rest goes on
                self.job.notes.append(str(value))
