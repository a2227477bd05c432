"""A Hyperscan scanner for the CLI: every signature and anchor in one pass over each chunk.

Hyperscan (the ``hyperscan`` package on PyPI, a binding of Intel's library) compiles all the
patterns into one automaton and reports where each matches, at several hundred MB/s. Like the
RE2 scanner it only finds candidate lines: the matcher then runs the real Python patterns on
them, so every engine gives the same report (a parity test holds it).

Each signature is found by what it needs: when every literal its prefilter names (the rarest
text each of its matches contains, or the alternatives of a required alternation) is at least
``LITERAL_MIN`` characters long, by those literals; otherwise by its byte form (``bytepattern``:
a pattern as wide as needed for bytes, never narrower). Either way a match names the signature
itself: the matcher checks only the signatures found on a line, not every signature whose anchor
the line holds. Long literals are what Hyperscan scans fastest and compiles at once (measured on
100 MiB of noise with 1,181 signatures: 0.13 s of CPU and 0.2 s to compile, against 0.19 s and
15 s for byte forms of them all, for 191 candidate lines instead of 107). A pattern without a
byte form, or one Hyperscan rejects, is replaced by its literals too.

Literals name more signatures per line than byte forms do, and each named signature costs a
Python regex on the line: nothing on a log of noise, but on a piece where most lines are
candidates (a log of failures, no two alike) it tripled the matcher's work. When a piece's scan
passes ``DENSE`` matches it stops there, and the piece is scanned with the byte forms of every
signature instead (compiled the first time it happens, then cached), which name only what may
match.

Compiling a database takes up to seconds, longer than scanning a 100 MiB log, so the
compiled database is kept in the CLI's cache folder (``cache``), named by a hash of the
expressions and the library's version; one that cannot be read or loaded is compiled again.
Optional: ``--engine hyperscan`` asks for it; ``--engine auto`` takes it when installed.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from ..progress import PROGRESS, tail_start
from ..scan import MARKERS
from . import cache
from .bytepattern import Unsupported, escape, to_bytes

try:  # optional dependency
    import hyperscan  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - exercised when hyperscan is absent
    hyperscan = None

# this module's and the rewrite's source: a plan or database from other code is not reused
_CODE = hashlib.sha256(b"".join(p.read_bytes() for p in (Path(__file__), Path(__file__).with_name("bytepattern.py")))).hexdigest()
ANCHOR = -1  # owner of an expression that is one of the matcher's own anchors (Xid parser...)
MARKER = -2  # owners from here down: the readers' markers (scan.MARKERS), noted but no candidate line
LITERAL_MIN = 8  # a signature whose prefilter literals are all this long is found by them, not its byte form
DENSE = 256  # matches in one piece (about 1 MiB) past which the byte forms name its lines instead
_NONE: frozenset[int] = frozenset()  # a line found by an anchor alone names no signature


def available() -> bool:
    return hyperscan is not None


def _flags(ignore_case: bool) -> int:
    return (hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY
            | (hyperscan.HS_FLAG_CASELESS if ignore_case else 0))


def _compile(items: list[tuple[bytes, bool]], extra: int = 0):  # noqa: ANN202 - a hyperscan.Database
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[e for e, _ in items], ids=list(range(len(items))), elements=len(items),
               flags=[_flags(ci) | extra for _, ci in items])
    return db


def _escape(text: str) -> bytes:
    return escape(text).encode()


def _cached(items: list[tuple[bytes, bool]], extra: int = 0):  # noqa: ANN202
    """The compiled database for ``items``, from the cache when it holds one, else compiled (and kept)."""
    digest = hashlib.sha256(repr((getattr(hyperscan, "__version__", ""), items, extra)).encode()).hexdigest()[:24]
    name = f"hyperscan-{digest}.db"
    data = cache.read(name)
    if data is not None:
        try:
            db = hyperscan.loadb(data, hyperscan.HS_MODE_BLOCK)
            db.scratch = hyperscan.Scratch(db)  # compile() makes one; a loaded database needs its own
            return db
        except Exception:  # noqa: BLE001 - damaged or from another build of the library: compile instead
            pass
    db = _compile(items, extra)
    cache.write(name, hyperscan.dumpb(db))
    return db


def _read_plan(name: str) -> tuple[list[tuple[bytes, bool]], list[int]] | None:
    data = cache.read(name)
    if data is None:
        return None
    try:
        plan = json.loads(data)
        items = [(str(e).encode("latin-1"), bool(ci)) for e, ci in plan["items"]]
        owners = [int(o) for o in plan["owners"]]
    except (ValueError, KeyError, TypeError, UnicodeEncodeError):
        return None  # damaged: planned again
    return (items, owners) if len(items) == len(owners) else None


class _Plan:
    """One database and what each of its expressions stands for (``owners``: a signature's index,
    ANCHOR, or a marker)."""

    def __init__(self, patterns: list[tuple[str, bool, list[str]]], anchors: list[str], use_cache: bool,
                 literal_min: int | None):
        # the plan (each expression, its case flag and what it stands for) depends only on the
        # patterns and this code: kept in the cache too, it spares rewriting every pattern per run
        self.singles: dict[int, frozenset[int]] = {}  # signature -> {signature}, shared by the lines naming it alone
        key = repr((_CODE, patterns, anchors, MARKERS, literal_min))
        name = "hyperscan-plan-" + hashlib.sha256(key.encode()).hexdigest()[:24]
        plan = _read_plan(name) if use_cache else None
        if plan is None:
            items, self.owners, self.db = _plan(patterns, anchors, use_cache, literal_min)
            if use_cache:
                cache.write(name, json.dumps({"items": [[e.decode("latin-1"), ci] for e, ci in items],
                                              "owners": self.owners}).encode())
        else:
            items, self.owners = plan
            self.db = _cached(items) if items else None


def _plan(patterns: list[tuple[str, bool, list[str]]], anchors: list[str], use_cache: bool,
          literal_min: int | None) -> tuple[list[tuple[bytes, bool]], list[int], object]:
    """Every expression to compile with what it stands for (a signature's literals when all are
    at least ``literal_min`` long, else its byte form, or its literals when it has none or
    Hyperscan rejects it; an anchor; a marker), and the database compiled from them (None when
    there is nothing to compile). ``literal_min`` None: byte forms wherever there is one."""
    compile_all = _cached if use_cache else _compile
    wanted: list[tuple[bytes, bool, int, list[bytes]]] = []  # expression, caseless, owner, literals instead
    for index, (pattern, ignore_case, literals) in enumerate(patterns):
        lits = [_escape(lit) for lit in literals]
        if literal_min is not None and literals and min(len(lit) for lit in literals) >= literal_min:
            wanted.extend((lit, ignore_case, index, []) for lit in lits)
            continue
        try:
            body, folded = to_bytes(pattern)
            wanted.append((body.encode(), folded or ignore_case, index, lits))
        except (Unsupported, re.error):
            wanted.extend((lit, ignore_case, index, []) for lit in lits)
    wanted.extend((_escape(text), False, ANCHOR, []) for text in anchors)
    wanted.extend((_escape(marker.decode()), False, MARKER - k, []) for k, marker in enumerate(MARKERS))
    items = [(e, ci) for e, ci, _, _ in wanted]
    try:  # all at once; one expression Hyperscan rejects: try them one by one
        return items, [owner for _, _, owner, _ in wanted], compile_all(items)
    except Exception:  # noqa: BLE001 - hyperscan.error and friends
        usable: list[tuple[bytes, bool, int, list[bytes]]] = []
        for expr, ci, owner, lits in wanted:
            try:
                _compile([(expr, ci)])
                usable.append((expr, ci, owner, []))
            except Exception:  # noqa: BLE001
                usable.extend((lit, ci, owner, []) for lit in lits)
        items = [(e, ci) for e, ci, _, _ in usable]
        return items, [owner for _, _, owner, _ in usable], compile_all(items) if items else None


class HyperscanScanner:
    """Candidate lines, each with the signatures that matched on it."""

    names_signatures = True  # the third item of a candidate line: signature indices, not anchors
    ahead = 2  # pieces scanned at once, each on its own thread, while the reader reads the one before

    def __init__(self, patterns: list[tuple[str, bool, list[str]]], anchors: list[str], use_cache: bool = True):
        if hyperscan is None:
            raise RuntimeError("hyperscan is not installed")
        self._args = (patterns, anchors, use_cache)
        self.fast = _Plan(patterns, anchors, use_cache, LITERAL_MIN)
        self._precise: _Plan | None = None  # byte forms: compiled when a piece is dense with candidates
        self._precise_lock = threading.Lock()
        # progress patterns, in the tail of each piece only, with where each match starts
        progress = [(rx.pattern, False) for rx in PROGRESS]
        self.progress_db = (_cached(progress, hyperscan.HS_FLAG_SOM_LEFTMOST) if use_cache
                            else _compile(progress, hyperscan.HS_FLAG_SOM_LEFTMOST))
        self._worker: ThreadPoolExecutor | None = None
        self._scratch = threading.local()  # each scanning thread needs scratch space of its own per database

    def precise(self) -> _Plan:
        """The plan of byte forms, which names only the signatures that may really match a line."""
        with self._precise_lock:
            if self._precise is None:
                self._precise = _Plan(*self._args, None)
            return self._precise

    @classmethod
    def for_matcher(cls, matcher) -> "HyperscanScanner":  # noqa: ANN001 - generator.matcher.match.Matcher
        return cls(matcher.patterns, [a["text"] for a in matcher.rules["anchors"] if a.get("builtin")])

    def submit(self, data: bytes) -> Future:
        """Scan ``data`` on the scanner's own thread (Hyperscan lets go of the interpreter while it
        scans); the future gives ``(candidate lines, markers seen, progress starts)``, the last as
        ``progress.SourceProgress.feed`` takes them."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=self.ahead, thread_name_prefix="hyperscan")
        return self._worker.submit(self._scan, data)

    def candidate_lines(self, data: bytes) -> list[tuple[int, int, frozenset[int]]]:
        """Candidate lines with the signatures that matched on each (``submit`` gives the rest)."""
        return self.submit(data).result()[0]

    def _scan(self, data: bytes) -> tuple[list[tuple[int, int, frozenset[int]]], frozenset[bytes], list[tuple[int, int]]]:
        fast = self._lines(data, self.fast, DENSE)
        # a piece dense with literal matches: stopped early, named by what may really match
        lines, markers = fast if fast is not None else self._lines(data, self.precise())
        return lines, markers, self._progress(data)

    def _scratch_for(self, db):  # noqa: ANN001, ANN202 - a hyperscan.Database, its hyperscan.Scratch
        mine = getattr(self._scratch, "by_db", None)
        if mine is None:
            mine = self._scratch.by_db = {}
        scratch = mine.get(id(db))
        if scratch is None:
            scratch = mine[id(db)] = hyperscan.Scratch(db)
        return scratch

    def _progress(self, data: bytes) -> list[tuple[int, int]]:
        window = tail_start(data)
        starts: set[tuple[int, int]] = set()
        add = starts.add
        self.progress_db.scan(data[window:], match_event_handler=lambda id_, start, _end, _flags, _ctx: add((window + start, id_)),
                              scratch=self._scratch_for(self.progress_db))
        return sorted(starts)

    def _lines(self, data: bytes, plan: _Plan,
               limit: int | None = None) -> tuple[list[tuple[int, int, frozenset[int]]], frozenset[bytes]] | None:
        """Candidate lines and markers of ``data``; None when ``limit`` matches were passed (the
        scan stops there)."""
        if plan.db is None:
            return [], frozenset()
        found: list[tuple[int, int]] = []
        add = found.append
        if limit is None:
            handler = lambda id_, _start, end, _flags, _ctx: add((end, id_))  # noqa: E731
        else:
            handler = lambda id_, _start, end, _flags, _ctx: add((end, id_)) or len(found) > limit  # noqa: E731
        try:
            plan.db.scan(data, match_event_handler=handler, scratch=self._scratch_for(plan.db))
        except hyperscan.ScanTerminated:
            return None
        if not found:
            return [], frozenset()
        found.sort()
        owners = plan.owners
        singles = plan.singles
        size = len(data)
        out: list[tuple[int, int, frozenset[int]]] = []
        append = out.append
        rfind, find = data.rfind, data.find
        markers: set[bytes] = set()
        start = end = -1
        names: frozenset[int] | set[int] = _NONE
        for at, id_ in found:
            owner = owners[id_]
            if owner <= MARKER:
                markers.add(MARKERS[MARKER - owner])
                continue
            pos = at - 1 if at else 0  # the match's last byte (a match ending at $ ends before the LF)
            if pos > end:
                if start >= 0:
                    append((start, end, names if names.__class__ is frozenset else frozenset(names)))
                start = rfind(b"\n", 0, pos) + 1
                end = find(b"\n", pos)
                if end < 0:
                    end = size
                # most lines name one signature: its set is made once per plan, not once per line
                if owner == ANCHOR:
                    names = _NONE
                else:
                    names = singles.get(owner)
                    if names is None:
                        names = singles[owner] = frozenset((owner,))
            elif owner != ANCHOR and owner not in names:
                names = {*names, owner}
        if start >= 0:
            append((start, end, names if names.__class__ is frozenset else frozenset(names)))
        return out, frozenset(markers)
