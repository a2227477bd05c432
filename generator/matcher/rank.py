"""Group hits into findings and rank them: the root cause first, collateral after it.

A finding is collateral when another failure present in the same log can cause it,
directly or through a chain, according to the corpus's ``causes``/``caused_by`` edges (and
to the driver's own "caused by previous Xid N"), and not the other way round; a failure that first shows clearly later on the same clock
cannot be the cause. A ``wrapper`` entry (a launcher's report that a worker failed) is
collateral of any other failure present. Among roots,
and among collateral findings, the score orders them: severity, specificity (a failure
that many others can cause, such as a collective timeout, says less), how early it appears,
and how often. Findings of severity ``info`` never count as failures.

Hits are folded as they arrive (``Tally``): per entry a count, the first few hits as
evidence, the last line, and per place (host, rank, GPU) a count and first and last line,
with a bounded number of places. Memory does not depend on how many lines match.
"""

from __future__ import annotations

import bisect
import calendar
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .match import Hit

SEVERITY_WEIGHT = {"critical": 1.0, "high": 0.8, "medium": 0.6, "low": 0.4, "info": 0.1}
MAX_EVIDENCE = 5
MAX_PLACES = 32  # places (host, rank, GPU) counted one by one per finding; the rest are summed as "other"
# A cause may be logged slightly after its effect (clocks of two nodes, buffered writes).
CLOCK_TOLERANCE_S = 2.0


@dataclass
class Finding:
    id: str
    meta: dict
    hits: list[Hit] = field(default_factory=list)
    count: int = 0
    role: str = "root"
    score: float = 0.0
    because_of: list[str] = field(default_factory=list)
    gpu_pci: str | None = None  # first GPU address seen on any of its lines (not only the evidence kept)
    first_failure: Hit | None = None  # a line that names the first failing worker (torchelastic)
    last_line: int = 0
    places: dict = field(default_factory=dict)  # (host, rank, gpu) -> [count, first line, last line, first hit]
    other_places: int = 0  # hits at places beyond MAX_PLACES

    @property
    def first(self) -> Hit:
        return self.hits[0]

    @property
    def severity(self) -> str:
        return self.meta["severity"]


def unknown_meta(entry_id: str) -> dict:
    """What a report says about a hit whose entry is not in the rules (an Xid code not yet described)."""
    code = entry_id.removeprefix("xid-")
    return {"title": f"Xid {code} (not described in the atlas yet)", "category": "xid", "severity": "medium",
            "owner": "driver", "path": None, "summary": "", "fix": [], "causes": [], "caused_by": [], "xid": None,
            "unknown": True}


def _closure(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    reach: dict[str, set[str]] = {}
    for start in graph:
        seen: set[str] = set()
        stack = list(graph[start])
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, ()))
        reach[start] = seen
    return reach


def _earlier_failure(hit: Hit, current: Hit | None) -> bool:
    """Whether ``hit`` names an earlier first failure than ``current``.

    Two launcher summaries in one log (two nodes, or a restart) each name a first failure;
    their ``time`` fields (``2023-06-01_22:45:01``, which sort as text) say which came first.
    Without both times, the first in the log stands.
    """
    if current is None:
        return True
    mine, theirs = hit.fields.get("time"), current.fields.get("time")
    return bool(mine and theirs and str(mine) < str(theirs))


def clock(hit: Hit, year: int = 0) -> tuple[str, float] | None:
    """The hit's time on a clock that can be compared across inputs, or None.

    Uptime restarts on every boot of every host, so it compares only within one input;
    syslog and glog times carry no year: given the ``year`` the job's dated lines show, they
    join the dated clock, else they compare only with each other.
    """
    t = hit.context.time
    if not t:
        return None
    kind, value = t
    if kind == "uptime":
        return (f"uptime/{hit.source}", value)
    if kind == "wall-noyear" and year:
        g = time.gmtime(value)  # parsed in 2000; the same month, day and time in the job's year
        return ("wall", calendar.timegm((year, g.tm_mon, g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec)) + value % 1)
    return t


def year_shift(hits: Iterable[Hit]) -> int:
    """The year most of the job's dated lines show (0 when none do): year-less times are placed in it."""
    years: dict[int, int] = {}
    for h in hits:
        if h.context.time and h.context.time[0] == "wall":
            y = time.gmtime(h.context.time[1]).tm_year
            years[y] = years.get(y, 0) + 1
    return max(years, key=years.get) if years else 0


def main_clock(hits: Iterable[Hit], shift: int = 0) -> str | None:
    """The clock most of ``hits`` carry (ties broken by name): the one hits are ordered by."""
    kinds: dict[str, int] = {}
    for h in hits:
        t = clock(h, shift)
        if t:
            kinds[t[0]] = kinds.get(t[0], 0) + 1
    return max(kinds, key=lambda k: (kinds[k], k)) if kinds else None


def order_key(hits: Iterable[Hit], time_kind: str | None, shift: int = 0) -> Callable[[Hit], tuple]:
    """A sort key that puts hits in the order they happened, as far as their lines tell.

    A hit on ``time_kind`` is placed by its time. A hit without one (a rank's traceback between
    the launcher's timestamped lines, a kernel line of another clock) takes the time of the last
    timed hit above it in the same input, or of the first one below it when none is above: it
    stays where the log put it. Ties keep the line order. Hits of inputs that have no timed hit
    at all come after, by input and line.
    """
    timed: dict[int, list[tuple[int, float]]] = {}
    for h in hits:
        t = clock(h, shift)
        if time_kind and t and t[0] == time_kind:
            timed.setdefault(h.source, []).append((h.line, t[1]))
    for marks in timed.values():
        marks.sort()

    def key(hit: Hit) -> tuple:
        line = hit.line - 1.5 if _continues(hit) else hit.line
        t = clock(hit, shift)
        if time_kind and t and t[0] == time_kind:
            return (0, t[1], hit.source, line)
        marks = timed.get(hit.source)
        if marks:
            i = bisect.bisect_right(marks, (hit.line, math.inf))
            return (0, marks[i - 1][1] if i else marks[0][1], hit.source, line)
        return (1, hit.source, line, 0)
    return key


def _continues(hit: Hit) -> bool:
    """Whether the hit's line is the origin line PyTorch's C++ core prints right under an error
    message ("Exception raised from <function> at <file>:<line> (most recent call first):").
    It belongs to the error above it, and a signature that matched it names where that error
    came from, which the message alone may not (PyTorch3D and detectron2 raise the same words):
    it is ordered just before the line above it, so that its finding comes first."""
    return "Exception raised from " in hit.text[:120]


class Tally:
    """Hits folded as they arrive, in memory that does not grow with their number."""

    def __init__(self, ranker: "Ranker"):
        self.entries = ranker.entries
        self.xid_entries = ranker.xid_entries
        self.findings: dict[str, Finding] = {}
        self.dynamic: dict[str, set[str]] = {}  # causes the driver itself names ("caused by previous Xid N")

    def extend(self, hits: Iterable[Hit]) -> "Tally":
        for hit in hits:
            self.add(hit)
        return self

    def add(self, hit: Hit) -> None:
        f = self.findings.get(hit.entry)
        if f is None:
            f = self.findings[hit.entry] = Finding(hit.entry, self.entries.get(hit.entry) or unknown_meta(hit.entry))
        f.count += 1
        f.last_line = hit.line
        if len(f.hits) < MAX_EVIDENCE:
            f.hits.append(hit.settle())
        fields = hit.fields
        gpu = fields.get("gpu_pci")
        if f.gpu_pci is None and gpu:
            f.gpu_pci = gpu
        ctx = hit.context
        place = (ctx.host, ctx.rank, gpu)
        seen = f.places.get(place)
        if seen is not None:
            seen[0] += 1
            seen[2] = hit.line
        elif len(f.places) < MAX_PLACES:
            # each place's first hit: the timeline, and the earliest hit when inputs arrive one after another
            f.places[place] = [1, hit.line, hit.line, hit.settle()]
        else:
            f.other_places += 1
        if fields.get("first_failure") and _earlier_failure(hit, f.first_failure):
            f.first_failure = hit.settle()
        cause_code = fields.get("caused_by_xid")
        if cause_code is not None:
            cause = self.xid_entries.get(cause_code, f"xid-{cause_code}")
            self.dynamic.setdefault(cause, set()).add(hit.entry)

    def has_failure(self) -> bool:
        """Whether a hit of severity other than ``info`` was folded in (a failure, not a note)."""
        return any(f.severity != "info" for f in self.findings.values())

    def has_cause(self) -> bool:
        """Whether a failure other than a wrapper's was folded in: a wrapper ("a worker failed",
        the shell's "Segmentation fault") says that something stopped, not why."""
        return any(f.severity != "info" and not f.meta.get("wrapper") for f in self.findings.values())

    def add_again(self, entry: str, line: int, place: tuple) -> bool:
        """Count one more line of a finding at a place where it was seen before, when counting is
        all ``add`` would do (its evidence is full): True. False: the line needs ``add``."""
        found = self.counter(entry, place)
        if found is None:
            return False  # evidence not full, or a new place (or one past MAX_PLACES): add() decides
        f, seen = found
        f.count += 1
        f.last_line = line
        seen[0] += 1
        seen[2] = line
        return True

    def counter(self, entry: str, place: tuple) -> tuple[Finding, list] | None:
        """Where ``add_again`` would count a line of ``entry`` at ``place`` (the finding and its
        place's record), or None when it would not (``add`` is needed). Once given, it stays
        true: evidence and places are never taken away."""
        f = self.findings.get(entry)
        if f is None or len(f.hits) < MAX_EVIDENCE:
            return None
        seen = f.places.get(place)
        return None if seen is None else (f, seen)

    @staticmethod
    def count(counters: list[tuple[Finding, list]], lines: int, last: int) -> None:
        """``lines`` lines, the last of them ``last``, each counted with ``add_again`` at every one
        of ``counters`` (from ``counter``): the same as that many calls, in one step."""
        for f, seen in counters:
            f.count += lines
            f.last_line = last
            seen[0] += lines
            seen[2] = last


def _renumber(hit: Hit | None, offset: int) -> None:
    if hit is not None:
        hit.source += offset


def merge_tallies(into: Tally, other: Tally, offset: int) -> None:
    """Fold ``other`` (a tally of inputs numbered from 0) into ``into``, its sources shifted by
    ``offset``: how worker processes' partial diagnoses become one (memory stays bounded)."""
    for eid, f in other.findings.items():
        for h in f.hits:
            _renumber(h, offset)
        for p in f.places.values():
            if not any(p[3] is h for h in f.hits):
                _renumber(p[3], offset)
        if f.first_failure is not None and not any(f.first_failure is h for h in f.hits):
            _renumber(f.first_failure, offset)
        mine = into.findings.get(eid)
        if mine is None:
            into.findings[eid] = f
            continue
        mine.count += f.count
        mine.last_line = f.last_line  # the later inputs' last line (inputs are numbered in reading order)
        mine.hits.extend(f.hits[:max(0, MAX_EVIDENCE - len(mine.hits))])  # as one process keeps the first to arrive
        if mine.gpu_pci is None:
            mine.gpu_pci = f.gpu_pci
        if f.first_failure is not None and _earlier_failure(f.first_failure, mine.first_failure):
            mine.first_failure = f.first_failure
        for place, value in f.places.items():
            seen = mine.places.get(place)
            if seen is not None:
                seen[0] += value[0]
                seen[2] = value[2]
            elif len(mine.places) < MAX_PLACES:
                mine.places[place] = value
            else:
                mine.other_places += value[0]
        mine.other_places += f.other_places
    for cause, effects in other.dynamic.items():
        into.dynamic.setdefault(cause, set()).update(effects)


class Ranker:
    def __init__(self, rules: dict):
        self.entries: dict[str, dict] = rules["entries"]
        self.xid_entries = {int(k): v for k, v in rules["xid_entries"].items()}
        graph: dict[str, set[str]] = {eid: set() for eid in self.entries}
        for eid, meta in self.entries.items():
            for target in meta["causes"]:
                graph[eid].add(target)
            for source in meta["caused_by"]:
                graph.setdefault(source, set()).add(eid)
        self.graph = graph
        self.reach = _closure(graph)
        # how much fixed text each signature needs: of two entries matched on the same line, the
        # one whose signature needs more (the more specific) is placed first
        self.literal_chars = {(sig["entry"], sig["id"]): sum(len(lit) for lit in sig["literals"])
                              for sig in rules.get("signatures", [])}
        fan_in: dict[str, int] = {eid: 0 for eid in self.entries}
        for eid, targets in self.reach.items():
            for t in targets:
                fan_in[t] = fan_in.get(t, 0) + 1
        self.fan_in = fan_in

    def _specific(self, hit: Hit) -> int:
        """How specific the match of ``hit`` is: the fixed text its signature needs (a parser's
        reading of an Xid or SXid line counts as the most specific)."""
        return 1 << 20 if hit.signature is None else self.literal_chars.get((hit.entry, hit.signature), 0)

    def rank(self, hits: Iterable[Hit] | "Tally") -> list[Finding]:
        """Findings ordered root first; takes a Tally or any iterable of hits (folded here)."""
        tally = hits if isinstance(hits, Tally) else Tally(self).extend(hits)
        findings, dynamic = tally.findings, {k: set(v) for k, v in tally.dynamic.items()}
        if not findings:
            return []
        # the evidence kept is the first hits to arrive; with several inputs read one after the
        # other, a place's first hit may be earlier than all of them: it joins the candidates
        for f in findings.values():
            kept = {id(h) for h in f.hits}
            extra = [p[3] for p in f.places.values() if id(p[3]) not in kept]
            if extra:
                f.hits = f.hits + extra
        shift = year_shift(h for f in findings.values() for h in f.hits)
        time_kind = main_clock((h for f in findings.values() for h in f.hits), shift)
        in_order = order_key([h for f in findings.values() for h in f.hits], time_kind, shift)
        for f in findings.values():
            f.hits.sort(key=in_order)
            del f.hits[MAX_EVIDENCE:]
        order = sorted(findings.values(), key=lambda f: (in_order(f.first), -self._specific(f.first)))
        position = {f.id: i for i, f in enumerate(order)}

        def reaches(a: str, b: str) -> bool:
            if b in self.reach.get(a, ()):
                return True
            return b in dynamic.get(a, ())

        first_time = {f.id: clock(f.first, shift) for f in findings.values()}  # read once: compared pair by pair

        def later(a: Finding, b: Finding) -> bool:
            """``a`` first appears clearly after ``b`` on the same clock, so it cannot have caused ``b``."""
            ta, tb = first_time[a.id], first_time[b.id]
            return bool(ta and tb and ta[0] == tb[0] and ta[1] > tb[1] + CLOCK_TOLERANCE_S)

        # Xid 154 only restates the recovery action another Xid needs: it follows that Xid
        recovery = self.xid_entries.get(154, "xid-154")
        if recovery in findings:
            for f in findings.values():
                if f.id != recovery and f.meta.get("category") == "xid":
                    dynamic.setdefault(f.id, set()).add(recovery)
        failures = [f for f in findings.values() if f.severity != "info"]
        for f in findings.values():
            if f.severity == "info":
                f.role = "info"
                continue
            # a wrapper (a launcher's "a worker failed") restates whatever other failure the log shows
            wrapper = f.meta.get("wrapper")
            causes = []
            for other in failures:
                if other is f or later(other, f):
                    continue
                if (wrapper and not other.meta.get("wrapper")) or (
                        reaches(other.id, f.id) and not (reaches(f.id, other.id) and position[f.id] < position[other.id])):
                    causes.append(other.id)
            if causes:
                f.role = "collateral"
                f.because_of = sorted(causes, key=lambda c: position[c])
        n = len(order)
        for f in findings.values():
            severity = SEVERITY_WEIGHT.get(f.severity, 0.5)
            specificity = 1.0 / (1.0 + math.log2(1 + self.fan_in.get(f.id, 0)))
            earliness = 1.0 - position[f.id] / n if n > 1 else 1.0
            frequency = min(f.count, 10) / 10
            score = 0.45 * severity + 0.25 * specificity + 0.2 * earliness + 0.1 * frequency
            if f.meta.get("unknown"):
                score *= 0.7
            if f.role == "collateral":
                score *= 0.5
            elif f.role == "info":
                score *= 0.2
            f.score = round(score, 3)
        role_order = {"root": 0, "collateral": 1, "info": 2}
        return sorted(findings.values(), key=lambda f: (role_order[f.role], -f.score, position[f.id]))
