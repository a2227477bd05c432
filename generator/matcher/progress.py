"""Hangs that print no error: each rank's last progress line, and the ranks that stopped first.

Training loops print counters (Megatron ``iteration 100/ 1000``, ``step=100``, ``global_step:
100``, ``Step 100/1000``, tqdm bars ``| 120/266 [00:10<...``). A hung job stops printing them
and is later ended by a watchdog, a heartbeat monitor, a time limit or by hand, often with
no error of its own. Per input and rank this module keeps the last such line (its step,
time and line number); the report then says which ranks never reached the step the others
reached, or, when all stopped at the same step, which went quiet first.

Cost is bounded: only the last ``TAIL`` bytes of each piece of input (1 MiB) are searched, with
a few substring scans in C, and of those progress lines only the last ``PER_CHUNK`` are parsed
(the last line of each rank is what counts); at most ``MAX_RANKS`` ranks are tracked. The
price: a rank that stops printing early in a piece is reported at its last line in an earlier
piece's tail, a step or two before its true last one (the ranks named as behind stay right).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .parse import may_name_rank, may_name_rank_in, parse_context, parse_rank, parse_time
from .read import Chunk
from .sources import SourceInfo

# One pattern per wording, each starting with a literal, so the regex engine skips ahead with a
# fast substring search (one alternation of all of them reads ten times slower).
PROGRESS = tuple(re.compile(p) for p in (
    rb"iteration\s{0,12}(\d{1,9})\s{0,4}/\s{0,12}\d{1,9}",    # Megatron: iteration      100/    1000 |
    rb"Iteration\s{0,12}(\d{1,9})\s{0,4}/\s{0,12}\d{1,9}",
    rb"step\s{0,2}[=:]\s{0,4}(\d{1,9})\b",                   # step=100, step: 100, global_step=100
    rb"Step\s{0,2}[=:]\s{0,4}(\d{1,9})\b",
    rb"Step\s(\d{1,9})\s{0,2}/\s{0,2}\d{1,9}",                 # Step 100/1000
    rb"step\s(\d{1,9})\s{0,2}/\s{0,2}\d{1,9}",                 # (a class first would cost a scan at every byte)
    rb"\|\s{0,2}(\d{1,9})/\d{1,9}\s\[\d",                      # tqdm: 45%|####5     | 120/266 [00:10<00:12
    rb"iter(?:ation)?\s{0,2}[=:]\s{0,4}(\d{1,9})\b",          # iter: 100, iteration=100
))
SILENCE_S = 1800  # alive this long after the last progress line, with no ending in the logs: a hang
PER_CHUNK = 128
TAIL = 128 << 10  # of each piece of input (1 MiB), the last bytes searched for progress lines
MAX_RANKS = 4096
# Findings that say the job was stopped rather than why: with progress that ended, a hang
# (a watchdog or heartbeat gave up, a time limit or a person cancelled, the launcher tore down).
STOP_ENTRIES = frozenset({
    "nccl-watchdog-timeout", "nccl-heartbeat-timeout", "gloo-collective-timeout", "dist-store-timeout",
    "slurm-job-killed", "slurm-task-killed", "torchelastic-agent-signal",
    "distributed-hang", "jax-distributed-barrier-timeout", "xla-collective-rendezvous-stuck",
    "horovod-stalled-tensors",  # Horovod's stall inspector: ranks waiting on others that never submitted
})


def tail_start(data: bytes) -> int:
    """Where the part of a piece searched for progress lines starts: the first line that begins in
    its last TAIL bytes (0 for a piece shorter than that)."""
    window = max(0, len(data) - TAIL)
    if window:
        window = data.find(b"\n", window) + 1 or len(data)
    return window


@dataclass
class Mark:
    """One rank's last progress line."""

    source: int
    rank: int | None
    host: str | None
    step: int
    line: int
    text: str
    time: tuple[str, float] | None


class SourceProgress:
    """Progress lines of one input."""

    def __init__(self, tracker: "ProgressTracker", index: int, info: SourceInfo):
        self.tracker = tracker
        self.index = index
        self.info = info

    def feed(self, chunks: list[Chunk], found: list[tuple[int, int]] | None = None) -> None:
        """Read progress lines. ``found``: for a single chunk, where PROGRESS patterns start in its
        tail (``tail_start``) as (offset, pattern index), when a scanner found them already."""
        for chunk in chunks:
            self._chunk(chunk, found)

    def _chunk(self, chunk: Chunk, found: list[tuple[int, int]] | None = None) -> None:
        data = chunk.data
        self._latest(data)
        if found is None:
            window = tail_start(data)
            found = sorted({(m.start(), k) for k, rx in enumerate(PROGRESS) for m in rx.finditer(data, window)})
        if not found:
            return
        found = found[-PER_CHUNK:]
        first_line = data.rfind(b"\n", 0, found[0][0]) + 1
        if len(found) > 1 and not may_name_rank_in(data, first_line):
            # no line here can name a rank: only the last progress line counts (its first counter)
            last_line = data.rfind(b"\n", 0, found[-1][0]) + 1
            found = [f for f in found if f[0] >= last_line]
        # the last lines count: each rank's last progress. From the end back, the first line of a
        # rank is its last; earlier lines of a rank already seen are skipped before their context
        # (time, host) is parsed, which is what costs.
        kept: list[tuple[int, str, int]] = []
        ranks: set[int | None] = set()
        taken_from = len(data) + 1
        for pos, k in reversed(found):
            m = PROGRESS[k].match(data, pos)
            if m is None:
                continue
            start = data.rfind(b"\n", 0, pos) + 1
            if start >= taken_from:  # another counter on a line already seen: the first on a line counts
                if kept and kept[-1][0] == start:
                    kept[-1] = (start, kept[-1][1], int(m.group(1)))
                continue
            end = data.find(b"\n", m.end())
            raw = data[start:end if end >= 0 else len(data)]
            text = raw.decode("utf-8", errors="replace") if may_name_rank(raw) else None  # else: no rank
            rank = None if text is None else parse_rank(text)
            taken_from = start
            if rank in ranks:
                continue
            ranks.add(rank)
            kept.append((start, raw.decode("utf-8", errors="replace") if text is None else text, int(m.group(1))))
        line = cursor = -1
        for start, text, step in reversed(kept):
            line = chunk.line_at(start) if cursor < 0 else line + data.count(b"\n", cursor, start)
            cursor = start
            self.tracker.mark(self.index, self.info, text, step, line)

    def _latest(self, data: bytes) -> None:
        """The time of the piece's last line: how long the job went on after its last progress."""
        end = len(data)
        while end and data[end - 1] == 10:  # trailing LFs (without copying the piece as rstrip would)
            end -= 1
            if len(data) - end == 64:  # a run of empty lines (a piece of only LFs): one copy beats a million steps
                end = len(data.rstrip(b"\n"))
                break
        start = data.rfind(b"\n", 0, end) + 1
        t = parse_time(data[start:end][:200].decode("utf-8", errors="replace"))
        if t and t[0] == "wall" and t[1] > self.tracker.latest:
            self.tracker.latest = t[1]


class ProgressTracker:
    def __init__(self) -> None:
        self.marks: dict[tuple[int, int | None], Mark] = {}
        self.latest = 0.0  # the latest clock time seen at the end of any piece of any input

    def source(self, index: int, info: SourceInfo) -> SourceProgress:
        return SourceProgress(self, index, info)

    def mark(self, source: int, info: SourceInfo, text: str, step: int, line: int) -> None:
        ctx = parse_context(text)
        rank = ctx.rank if ctx.rank is not None else info.rank
        key = (source, rank)
        if key not in self.marks and len(self.marks) >= MAX_RANKS:
            return
        known = self.marks.get(key)
        if known is not None and line < known.line:
            return
        self.marks[key] = Mark(source, rank, ctx.host or info.host, step, line, text.strip()[:300], ctx.time)

    def merge(self, other: "ProgressTracker", offset: int) -> None:
        """Take another tracker's marks (inputs numbered from 0), its sources shifted by ``offset``."""
        self.latest = max(self.latest, other.latest)
        for (source, rank), mark in other.marks.items():
            mark.source = source + offset
            if len(self.marks) < MAX_RANKS:
                self.marks[(source + offset, rank)] = mark

    def summary(self, findings: list) -> dict | None:  # noqa: ANN001 - rank.Finding
        """What the progress lines say, and whether the job hung; None when there were none."""
        if not self.marks:
            return None
        marks = list(self.marks.values())
        top = max(m.step for m in marks)
        behind = sorted((m for m in marks if m.step < top), key=lambda m: (m.step, m.source, m.line))
        failures = [f for f in findings if f.role != "info"]
        stopped_by = [f.id for f in failures if f.id in STOP_ENTRIES]
        timed = [m for m in marks if m.time and m.time[0] == "wall"]
        first_quiet: list[Mark] = []
        if not behind and len(timed) == len(marks) > 1:
            earliest = min(m.time[1] for m in timed)
            if max(m.time[1] for m in timed) - earliest > 30:  # the others printed on for a while: these went quiet first
                first_quiet = [m for m in timed if m.time[1] - earliest <= 30]
        culprits = behind or first_quiet
        # a hang needs nothing else failed and either the job's ending in the logs (a watchdog,
        # heartbeat, time limit or signal) or the job still printing long after its last progress;
        # progress that merely stops is what every finished or cut log shows
        silent = bool(timed) and self.latest - max(m.time[1] for m in timed) > SILENCE_S
        hang = all(f.id in STOP_ENTRIES for f in failures) and (bool(stopped_by) or silent)
        out = {
            "hang": hang,
            "max_step": top,
            "ranks": [_mark_dict(m) for m in sorted(marks, key=lambda m: (m.rank is None, m.rank or 0, m.source))[:256]],
            "behind": [_mark_dict(m) for m in behind[:64]],
            "stopped_first": [_mark_dict(m) for m in first_quiet[:64]],
            "ended_by": stopped_by,
        }
        out["message"] = _message(marks, top, culprits, stopped_by, hang)
        return out


def _who(marks: list[Mark]) -> str:
    ranks = sorted({m.rank for m in marks if m.rank is not None})
    if ranks:
        return "rank" + ("s " if len(ranks) > 1 else " ") + ", ".join(str(r) for r in ranks[:16]) + (" …" if len(ranks) > 16 else "")
    hosts = sorted({m.host for m in marks if m.host})
    return ("host " + ", ".join(hosts[:8])) if hosts else "the job"


def _message(marks: list[Mark], top: int, culprits: list[Mark], stopped_by: list[str], hang: bool) -> str:
    ended = f"; then the job was ended ({', '.join(stopped_by)})" if stopped_by else ""
    if culprits:
        last = max(m.step for m in culprits)
        when = _when(max(culprits, key=lambda m: m.step))
        others = f"; the others reached step {top}" if any(m.step == top for m in marks) and last < top else ""
        return f"no progress on {_who(culprits)} after step {last}{when}{others}{ended}"
    when = _when(max(marks, key=lambda m: (m.time[1] if m.time else 0, m.line)))
    lead = "no progress after" if hang else "last progress at"
    return f"{lead} step {top}{when} on every rank that reported progress{ended}"


def _when(mark: Mark) -> str:
    from .report import time_text  # noqa: PLC0415 - report imports this module's users

    t = time_text(mark.time)
    return f" at {t}" if t else f" (line {mark.line})"


def _mark_dict(m: Mark) -> dict:
    from .report import time_text  # noqa: PLC0415

    out = {"source": m.source, "step": m.step, "line": m.line, "text": m.text}
    if m.rank is not None:
        out["rank"] = m.rank
    if m.host:
        out["host"] = m.host
    t = time_text(m.time)
    if t:
        out["time"] = t
    return out
