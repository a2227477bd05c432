"""Debug artefacts of a hung job: PyTorch NCCL flight recorder dumps and py-spy stack dumps.

**Flight recorder.** With ``TORCH_NCCL_TRACE_BUFFER_SIZE`` set, each rank keeps its last
collectives and dumps them when the watchdog fires (one file per rank, a Python pickle of a
dict: ``version``, ``pg_config``, ``pg_status`` with each group's last enqueued, started and
completed collective, and ``entries`` with ``collective_seq_id``, ``profiling_name`` such as
``nccl:all_reduce``, ``state``, ``input_sizes``). The rank that never completed the
collective the others completed, or that issued a different operation at the same sequence
number, is the culprit.

A pickle can run code when it is loaded. These files are read with an unpickler that builds
only plain containers and scalars (dict, list, tuple, set, str, bytes, numbers, booleans,
None): every class or function reference, and every persistent id, is refused, so a file
written to harm fails with a message instead of running anything. Files over 64 MiB are
refused too. JSON dumps of the same structure are read as well.

**py-spy.** ``py-spy dump --pid`` prints each thread's stack, innermost frame first. Per
process the main thread's collective (``all_reduce``, ``broadcast``, ``barrier``...) is noted;
a process that sits in none while the others wait in one, or in another one, is the culprit.
"""

from __future__ import annotations

import io
import json
import pickle
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

MAX_DUMP_BYTES = 64 << 20
PICKLE_START = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")
COLLECTIVES = ("all_reduce", "allreduce", "broadcast", "barrier", "all_gather", "allgather", "reduce_scatter",
               "all_to_all", "alltoall", "reduce", "gather", "scatter", "send", "recv", "isend", "irecv")


class ArtefactError(ValueError):
    """A debug artefact that cannot be read (refused content, too large, not the expected shape)."""


class _PlainUnpickler(pickle.Unpickler):
    """Builds plain data only: any global (class, function) or persistent id is refused."""

    def find_class(self, module: str, name: str):  # noqa: ANN201
        raise ArtefactError(f"refers to {module}.{name}; only plain data (dicts, lists, strings, numbers) is read")

    def persistent_load(self, pid):  # noqa: ANN001, ANN201
        raise ArtefactError("uses persistent ids; only plain data is read")


def load_plain_pickle(data: bytes) -> object:
    """Unpickle ``data`` allowing nothing but plain containers and scalars."""
    if len(data) > MAX_DUMP_BYTES:
        raise ArtefactError(f"is {len(data) >> 20} MiB; flight recorder dumps over {MAX_DUMP_BYTES >> 20} MiB are not read")
    try:
        doc = _PlainUnpickler(io.BytesIO(data)).load()
    except ArtefactError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            MemoryError, RecursionError, OverflowError, UnicodeDecodeError) as exc:
        raise ArtefactError(f"is not a readable pickle ({type(exc).__name__}: {str(exc)[:80]})") from None
    _check_expansion(doc, len(data) + 1000)
    return doc


_CONTAINERS = (list, tuple, dict, set, frozenset)


def _check_expansion(doc: object, limit: int) -> None:
    """Refuse a pickle whose values, written out, would far outgrow the file.

    A pickle can name one list many times (its memo): 500 bytes can stand for a billion-element
    nest of lists, which the first ``str()`` of a field would write out (a hang, then all of
    memory). Written out, plain data holds at most about one value per byte of its pickle, so
    the written-out size is counted (each distinct container once, in one pass) and held to that;
    a container that holds itself is refused too."""
    def parts(obj) -> Iterator[object]:  # noqa: ANN001 - a container: its items (a dict's keys and values)
        return (part for item in obj.items() for part in item) if isinstance(obj, dict) else iter(obj)

    sizes: dict[int, int] = {}
    stack: list[tuple[object, bool]] = [(doc, False)]
    open_: set[int] = set()
    while stack:
        obj, done = stack.pop()
        key = id(obj)
        if done:
            total = 1 + sum(sizes.get(id(part), 1) if isinstance(part, _CONTAINERS) else 1 for part in parts(obj))
            if total > limit:
                raise ArtefactError("is not a readable pickle (it names the same values over and over: written out "
                                    "they would far outgrow the file)")
            sizes[key] = total
            open_.discard(key)
            continue
        if key in sizes:
            continue
        if key in open_:
            raise ArtefactError("is not a readable pickle (a container that holds itself)")
        open_.add(key)
        stack.append((obj, True))
        stack.extend((part, False) for part in parts(obj) if isinstance(part, _CONTAINERS) and id(part) not in sizes)


def is_pickle(head: bytes) -> bool:
    return head[:2] in PICKLE_START


@dataclass
class RankTrace:
    """What one rank's flight recorder says about one process group."""

    rank: int | None
    source: int
    pg: str
    last_completed: int | None
    last_started: int | None
    last_entry: dict | None


def _as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_flight_recorder(doc: object, source: int, rank_hint: int | None) -> list[RankTrace]:
    """The per-group state of one dump (the decoded pickle or JSON)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list):
        raise ArtefactError("is not a flight recorder dump (no 'entries' list)")
    rank = _as_int(doc.get("rank"))
    rank = rank if rank is not None else rank_hint
    entries = [e for e in doc["entries"] if isinstance(e, dict)]
    groups: dict[str, RankTrace] = {}
    status = doc.get("pg_status") if isinstance(doc.get("pg_status"), dict) else {}
    for pg, st in status.items():
        if isinstance(st, dict):
            groups[str(pg)] = RankTrace(rank, source, str(pg), _as_int(st.get("last_completed_collective")),
                                        _as_int(st.get("last_started_collective")), None)
    for e in entries:
        if _as_int(e.get("collective_seq_id")) is None:
            continue
        pg = str(e.get("pg_id", "0"))
        trace = groups.setdefault(pg, RankTrace(rank, source, pg, None, None, None))
        if trace.last_entry is None or e["collective_seq_id"] >= trace.last_entry.get("collective_seq_id", -1):
            trace.last_entry = e
        if e.get("state") == "completed":
            seq = e["collective_seq_id"]
            if trace.last_completed is None or seq > trace.last_completed:
                trace.last_completed = seq
    return list(groups.values())


def _op(entry: dict | None) -> tuple:
    if not entry:
        return ("?",)
    return (str(entry.get("profiling_name", "?")), str(entry.get("input_sizes", "")))


def analyse_traces(traces: list[RankTrace]) -> dict | None:
    """The culprit ranks across every rank's dump, per process group, or None with fewer than two ranks."""
    by_pg: dict[str, list[RankTrace]] = {}
    for t in traces:
        by_pg.setdefault(t.pg, []).append(t)
    findings = []
    for pg, group in sorted(by_pg.items()):
        if len(group) < 2:
            continue
        completed = [t.last_completed if t.last_completed is not None else -1 for t in group]
        top = max(completed)
        behind = [t for t, c in zip(group, completed) if c < top]
        if behind:
            low = min(completed)
            culprits = [t for t, c in zip(group, completed) if c == low]
            findings.append({"pg": pg, "kind": "behind", "ranks": _ranks(culprits), "sources": [t.source for t in culprits],
                             "message": f"process group {pg}: {_who(culprits)} completed collective {low}, "
                                        f"the others reached {top}"})
            continue
        ops = Counter(_op(t.last_entry) for t in group)
        if len(ops) > 1:
            common, _ = ops.most_common(1)[0]
            odd = [t for t in group if _op(t.last_entry) != common]
            seq = odd[0].last_entry.get("collective_seq_id") if odd[0].last_entry else "?"
            findings.append({"pg": pg, "kind": "mismatch", "ranks": _ranks(odd), "sources": [t.source for t in odd],
                             "message": f"process group {pg}: {_who(odd)} issued {_op(odd[0].last_entry)[0]} "
                                        f"{_op(odd[0].last_entry)[1]} as collective {seq} where the others issued "
                                        f"{common[0]} {common[1]}"})
    if not findings:
        return None
    return {"culprits": findings, "message": findings[0]["message"]}


def _ranks(traces: list[RankTrace]) -> list[int]:
    return sorted({t.rank for t in traces if t.rank is not None})


def _who(traces: list[RankTrace]) -> str:
    ranks = _ranks(traces)
    return ("rank" + ("s " if len(ranks) > 1 else " ") + ", ".join(map(str, ranks))) if ranks else "one rank"


# ---- py-spy ---------------------------------------------------------------------------------
_THREAD = re.compile(r'^Thread (0x[0-9A-Fa-f]+|\d+) \((active|idle|active\+gil)\): "([^"]*)"')
_PROCESS = re.compile(r"^Process (\d+): ")
_FRAME = re.compile(r"^\s{2,}(\S+) \(([^)]*)\)")


@dataclass
class SpyThread:
    source: int
    pid: str
    name: str
    frames: list[str] = field(default_factory=list)

    @property
    def collective(self) -> str | None:
        for fn in self.frames:
            bare = fn.lstrip("_").lower()
            for name in COLLECTIVES:
                if bare == name or bare.startswith(name + "_") and name in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
                    return name
        return None


class PySpyReader:
    """Collects the main threads of ``py-spy dump`` output in one input (bounded: 4096 threads)."""

    def __init__(self, source: int) -> None:
        self.source = source
        self.pid = "?"
        self.threads: list[SpyThread] = []
        self.group: list[SpyThread] = []  # thread headers waiting for their stack
        self.framed = False  # the current group already has frames

    def line(self, text: str) -> None:
        m = _PROCESS.match(text)
        if m:
            self.pid = m.group(1)
            self.group, self.framed = [], False
            return
        m = _THREAD.match(text)
        if m:
            if self.framed:
                self.group, self.framed = [], False
            if m.group(3) == "MainThread" and len(self.threads) < 4096:
                # py-spy names the thread by its native id; without a Process line that id stands for the process.
                # Headers listed one after another share the stack below them (dumps grouped by identical stacks).
                thread = SpyThread(self.source, self.pid if self.pid != "?" else m.group(1), m.group(3))
                self.threads.append(thread)
                self.group.append(thread)
            return
        m = _FRAME.match(text)
        if m and self.group:
            self.framed = True
            for thread in self.group:
                if len(thread.frames) < 64:
                    thread.frames.append(m.group(1))


def analyse_spy(threads: list[SpyThread], hosts: dict[int, str | None]) -> dict | None:
    """The processes whose main thread is not where the others wait."""
    stacks = [t for t in threads if t.frames]
    if len(stacks) < 2:
        return None
    where = Counter(t.collective for t in stacks)
    common, count = where.most_common(1)[0]
    if common is None or count == len(stacks):
        return None
    odd = [t for t in stacks if t.collective != common]
    outliers = [{"source": t.source, "pid": t.pid, "host": hosts.get(t.source), "top": t.frames[0],
                 "collective": t.collective} for t in odd[:32]]
    first = outliers[0]
    at = f" on {first['host']}" if first["host"] else ""
    sits = f"in {first['collective']}" if first["collective"] else f"in {first['top']}, outside any collective"
    more = f" (and {len(odd) - 1} more)" if len(odd) > 1 else ""
    return {"collective": common, "waiting": count, "outliers": outliers,
            "message": f"{count} of {len(stacks)} processes wait in {common}; process {first['pid']}{at} sits {sits}{more}"}


# ---- stall reports ---------------------------------------------------------------------------
# Horovod's stall check lists, per stalled tensor, the ranks that did submit it ("ready ranks")
# or, in later releases, those that did not ("missing ranks").
_STALL = re.compile(rb"\[(ready|missing) ranks: ([0-9][0-9, ]{0,8000})\]")
MAX_STALLS = 4096


class StallReader:
    """Ranks named by stall reports in one input (bounded)."""

    def __init__(self) -> None:
        self.missing: Counter = Counter()
        self.reports = 0

    def merge(self, other: "StallReader") -> None:
        self.missing.update(other.missing)
        self.reports += other.reports

    def chunk(self, data: bytes) -> None:
        """A chunk that holds " ranks: " (the caller checked)."""
        for m in _STALL.finditer(data):
            if self.reports >= MAX_STALLS:
                return
            ranks = {int(r) for r in m.group(2).replace(b" ", b"").split(b",") if r.isdigit()}
            if not ranks:
                continue
            # with only the ready ranks, the missing ones are the gaps below the highest (a missing
            # highest rank cannot be seen this way)
            missing = ranks if m.group(1) == b"missing" else set(range(max(ranks) + 1)) - ranks
            self.reports += 1
            self.missing.update(missing)


def analyse_stalls(readers: list[StallReader]) -> dict | None:
    missing: Counter = Counter()
    reports = 0
    for r in readers:
        missing.update(r.missing)
        reports += r.reports
    if not missing:
        return None
    top = max(missing.values())
    ranks = sorted(r for r, n in missing.items() if n == top)
    who = "rank" + ("s " if len(ranks) > 1 else " ") + ", ".join(map(str, ranks))
    return {"ranks": ranks, "reports": reports,
            "message": f"{who} never submitted the tensors the other ranks wait for ({reports} stall reports)"}


# ---- watchdog lines -------------------------------------------------------------------------
_WORK = re.compile(r"WorkNCCL\(SeqNum=(\d+), OpType=(\w+), NumelIn=(\d+), NumelOut=(\d+)")


def analyse_watchdogs(findings: list) -> dict | None:  # noqa: ANN001 - rank.Finding
    """Ranks whose watchdog timed out on the same collective number with a different operation or
    size: a collective mismatch (a rank called broadcast where the others called all_reduce, or
    with another tensor size). A single odd rank is the culprit; a tie names every side."""
    seen: dict[int, tuple[int, str, int, int]] = {}
    for f in findings:
        if f.id != "nccl-watchdog-timeout":
            continue
        for h in [*f.hits, *(p[3] for p in f.places.values())]:
            m = _WORK.search(h.text)
            if m and h.context.rank is not None and h.context.rank not in seen:
                seen[h.context.rank] = (int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)))
    by_seq: dict[int, dict[tuple, list[int]]] = {}
    for rank, (seq, op, n_in, n_out) in seen.items():
        by_seq.setdefault(seq, {}).setdefault((op, n_in, n_out), []).append(rank)
    for seq, kinds in sorted(by_seq.items()):
        if len(kinds) < 2:
            continue
        groups = sorted(kinds.items(), key=lambda kv: (len(kv[1]), kv[0]))
        sizes = [len(ranks) for _, ranks in groups]
        odd = groups[0][1] if sizes[0] < sizes[1] else []
        sides = "; ".join(f"rank{'s' if len(r) > 1 else ''} {', '.join(map(str, sorted(r)))}: {op} of {n_in} elements"
                          for (op, n_in, _), r in groups)
        return {"seq": seq, "ranks": sorted(odd),
                "message": f"the watchdogs disagree on collective {seq} ({sides})"
                           + (f"; rank {sorted(odd)[0]} is the odd one" if len(odd) == 1 else "")}
    return None


def read_json_dump(data: bytes) -> object:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ArtefactError(f"is not readable JSON ({type(exc).__name__})") from None
