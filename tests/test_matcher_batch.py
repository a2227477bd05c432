"""Chunks of repeated lines read as batches (Matcher.batch, Source._add_batch) give the very report
that reading them line by line gives, on every engine, and batches are really used."""

from __future__ import annotations

import io
import random

import pytest

from generator.matcher import Diagnoser, to_json, to_text
from generator.matcher.job import Job
from generator.matcher.match import BATCH_MIN_LINES, Matcher, _memo_key

HEADS = ("[{t:12.6f}] ", "3: [{t:12.6f}] ", "2024-05-01T10:{m:02d}:{s:02d}.{u:06d}Z ", "May  1 10:{m:02d}:{s:02d} node-{h} kernel: [{t:.6f}] ",
         "10:{m:02d}:{s:02d}.{u:03d} ", "", "[2024-05-01 10:{m:02d}:{s:02d},{u:03d}] ")
BODIES = (
    "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
    "pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
    "Segmentation fault (core dumped)",
    "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU {g}; 79 GiB total capacity)",
    "NVRM: Xid (PCI:0000:3b:00): 79, pid={p}, name=python, GPU has fallen off the bus.",
    "NVRM: Xid (PCI:0000:{b:02x}:00): 45, pid={p}, name=python, Ch 00000010",
    "NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
    "NVRM: Xid (PCI:0000:3b:00): 62, pid={p}, caused by previous Xid 48",
    "NCCL WARN NET/IB : Got completion from peer 10.0.0.{h} with error 12, opcode 0, len 0, vendor err 129",
    "iteration {s:8d}/ 1000000 | consumed samples: {p} | lm loss: 2.1",
    "watchdog: an ordinary line that says nothing at all {u}",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
)


def _log(seed: int, size: int) -> bytes:
    """A log of runs of a few kinds of lines, each kind repeated with its own changing head, new
    kinds arriving now and then (late in a chunk too), a place (rank, GPU, host) that changes
    within a kind, and lines that must be read one by one (a GPU fallen off the bus, a cause
    the driver names)."""
    rng = random.Random(seed)
    out: list[str] = []
    n = 0
    kinds = [(rng.choice(HEADS), rng.choice(BODIES))]
    while sum(map(len, out)) < size:
        if rng.random() < 0.02:
            kinds.append((rng.choice(HEADS), rng.choice(BODIES)))
            kinds = kinds[-4:]
        head, body = rng.choice(kinds)
        for _ in range(rng.randint(50, 400)):
            n += 1
            head_, body_ = rng.choice(kinds) if rng.random() < 0.3 else (head, body)
            values = {"t": 1000 + n / 1000, "m": n // 60 % 60, "s": n % 60, "u": n % 1000, "h": rng.randint(1, 3),
                      "r": rng.choice((0, 1, 7)) if rng.random() < 0.9 else rng.randint(0, 60), "g": n % 2,
                      "p": rng.choice((12, 13)), "b": rng.choice((0x3b, 0x5e))}
            out.append((head_ + body_).format(**values) + "\n")
        if rng.random() < 0.1:
            out.append(f"noise {n} {rng.random()}\n")
    return "".join(out).encode()


def _diagnosers(rules: dict) -> list[tuple[str, Diagnoser]]:
    from generator.matcher.native import hsscan, re2scan  # noqa: PLC0415

    out = [("python", Diagnoser(rules))]
    if re2scan.available():
        out.append(("re2", Diagnoser(rules, scanner_factory=re2scan.Re2Scanner.for_matcher)))
    if hsscan.available():
        out.append(("hyperscan", Diagnoser(rules, scanner_factory=hsscan.HyperscanScanner.for_matcher, lazy=True)))
    return out


def _report(diagnoser: Diagnoser, inputs: list[tuple[str, bytes]], batching: bool, tried: list | None = None) -> tuple[dict, int]:
    """The report over ``inputs`` (read one after the other), and how many chunks were batches
    (``tried`` gets whether each chunk tried as one was)."""
    used = 0
    real = Matcher.batch
    tried = [] if tried is None else tried

    def counting(self: Matcher, data: bytes):  # noqa: ANN202
        nonlocal used
        batch = real(self, data)
        used += batch is not None
        tried.append(batch is not None)
        return batch

    diagnoser.matcher.memo.clear()
    Matcher.batching = batching
    Matcher.batch = counting  # type: ignore[method-assign]
    try:
        job = Job(diagnoser)
        states = []
        for name, data in inputs:
            job.read(name, io.BytesIO(data))
            states.append(_state(job))
        report = job.finish()
        report["tally after each input"] = states  # what a later input overwrites (the last line) counts too
        return report, used
    finally:
        Matcher.batching = True
        Matcher.batch = real  # type: ignore[method-assign]


def _state(job: Job) -> list:
    """Everything the tally holds, as plain values."""
    def hit(h):  # noqa: ANN001, ANN202
        return h and (h.line, h.source, h.entry, h.text, h.settle().context.time, h.context.rank, h.context.host, h.fields)

    return [(f.id, f.count, f.last_line, f.other_places, f.gpu_pci, hit(f.first_failure), [hit(h) for h in f.hits],
             [(place, p[:3], hit(p[3])) for place, p in f.places.items()]) for f in job.tally.findings.values()]


@pytest.fixture(scope="module")
def diagnosers(real_diagnoser: Diagnoser) -> list[tuple[str, Diagnoser]]:
    return _diagnosers(real_diagnoser.rules)


@pytest.mark.parametrize("seed", [1, 2])
def test_batches_give_the_report_line_by_line_reading_gives(diagnosers: list, seed: int) -> None:
    # two inputs: the second's line numbers are smaller than the first's last lines
    inputs = [("node-1/kern.log", _log(seed, 6 << 20)), ("rank-3.log", _log(seed + 100, 3 << 20))]
    for engine, diagnoser in diagnosers:
        batched, used = _report(diagnoser, inputs, True)
        plain, unused = _report(diagnoser, inputs, False)
        assert unused == 0 and used >= 2, (engine, used)
        assert batched.pop("tally after each input") == plain.pop("tally after each input"), engine
        assert to_json(batched) == to_json(plain), engine
        assert to_text(batched, "job") == to_text(plain, "job"), engine


def test_a_chunk_of_distinct_lines_ends_the_batches(diagnosers: list) -> None:
    repeated = "".join(f"[{1000 + i / 1000:12.6f}] pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0\n"
                       for i in range(70000))
    distinct = "".join(f"[rank{i % 512}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {i} MiB\n"
                       for i in range(40000))
    data = (repeated + distinct + repeated).encode()
    for engine, diagnoser in diagnosers:
        tried: list[bool] = []
        batched, used = _report(diagnoser, [("a.log", data)], True, tried)
        plain, _ = _report(diagnoser, [("a.log", data)], False)
        # batches, a failed trial on the distinct lines, then batches again
        assert used >= 2 and False in tried and True in tried[tried.index(False):], (engine, tried)
        assert batched.pop("tally after each input") == plain.pop("tally after each input"), engine
        assert to_json(batched) == to_json(plain), engine


def test_a_batch_unit_stands_for_lines_of_one_memo_key() -> None:
    """Two lines share a unit exactly when they share a memo key: heads of every kind, a rank
    prefix in some lines only, digits in the heads and in the rest of the lines."""
    rng = random.Random(5)
    lines = []
    for n in range(3000):
        head, body = rng.choice(HEADS), rng.choice(BODIES)
        values = {"t": rng.choice((1.5, 22.25, 1000 + n % 7)), "m": n % 3, "s": n % 7, "u": n % 11, "h": n % 2, "r": n % 3,
                  "g": 0, "p": 12, "b": 0x3b}
        lines.append((head + body).format(**values).encode())
    matcher = Matcher.__new__(Matcher)
    headless = [line for line in lines if not _memo_key(line)[1]]
    for data, raw in ((b"\n".join(lines) + b"\n", False), (b"\n".join(lines[:600] * 5), False),
                      (b"\n".join(headless * 3) + b"\n", True), (b"\n".join(lines[:100] * 30), True)):
        batch = matcher.batch(data)
        assert batch is not None and len(batch.units) == data.count(b"\n") + (data[-1:] != b"\n")
        assert (batch.units is batch.lines) == raw
        key_of = dict(zip(batch.distinct, batch.keys))
        assert all(key_of[unit] == _memo_key(line) for unit, line in zip(batch.units, batch.lines))
        # lines as their own units: a key may have several (they differ in their heads' digits)
        assert len(set(map(_memo_key, batch.lines))) == len(batch.distinct) or raw
        assert all(batch.reduced[start:].split(b"\n", 1)[0] == batch.lines[batch.lasts[unit]]
                   for unit, start in zip(batch.distinct, batch.starts))


def test_chunks_that_cannot_be_batches_are_not() -> None:
    matcher = Matcher.__new__(Matcher)
    line = b"[ 1.000000] pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0\n"
    assert matcher.batch(line * BATCH_MIN_LINES) is not None
    assert matcher.batch(line * (BATCH_MIN_LINES - 1)) is None  # too few lines
    assert matcher.batch(line * BATCH_MIN_LINES + b"x\r\n") is None  # a carriage return: segments
    assert matcher.batch(line * BATCH_MIN_LINES + b"x" * 3000 + b"\n") is None  # a line the memo does not take
    assert matcher.batch(b"".join(b"line %d\n" % i for i in range(1000))) is None  # mostly distinct


def test_the_last_line_of_a_finding_and_a_place_is_the_last_read(diagnosers: list) -> None:
    """Counted lines wait in their kinds and are added before a line read one by one: a finding's
    and a place's last line must still be the last one of the input (two kinds of one finding
    end the input, then a line of a third kind, read one by one)."""
    pair = ("[{t:12.6f}] pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0\n"
            "[{t:12.6f}] pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n")
    body = "".join(pair.format(t=1000 + i / 1000) for i in range(25000))
    last = "[ 9999.000000] pcieport 0000:00:01.0: AER: Corrected error received: 0000:02:00.0\n"
    inputs = [("node-1/kern.log", (body + last).encode()), ("node-2/kern.log", body.encode())]
    for engine, diagnoser in diagnosers:
        batched, used = _report(diagnoser, inputs, True)
        plain, _ = _report(diagnoser, inputs, False)
        assert used >= 2, engine
        states = batched.pop("tally after each input")
        assert states == plain.pop("tally after each input"), engine
        assert [(f[2], [p[1][2] for p in f[7]]) for f in states[0]] == [(50001, [50001])]
        assert [(f[2], [p[1][2] for p in f[7]]) for f in states[1]] == [(50000, [50001, 50000])]
        assert to_json(batched) == to_json(plain), engine


def test_a_scanner_that_names_no_line_start_gets_the_chunk_read_as_usual(diagnosers: list) -> None:
    """A scanner whose candidates are not the lines it was given (one of another kind, the
    browser's) does not lose hits: the chunk is scanned whole and read line by line."""
    from generator.matcher.scan import LiteralScanner  # noqa: PLC0415

    class Shifted(LiteralScanner):
        def candidate_lines(self, data: bytes) -> list:
            return [(start + 1, end, anchors) if start else (start, end, anchors) for start, end, anchors in super().candidate_lines(data)]

    pair = ("pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0\n"
            "pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n")
    data = (pair * 20000).encode()
    _, diagnoser = diagnosers[0]
    real = diagnoser.matcher.scanner
    diagnoser.matcher.scanner = Shifted(diagnoser.matcher.anchors)
    try:
        odd, used = _report(diagnoser, [("a.log", data)], True)
        plain, _ = _report(diagnoser, [("a.log", data)], False)
    finally:
        diagnoser.matcher.scanner = real
    assert used >= 1 and odd["findings"][0]["count"] == 40000
    assert odd.pop("tally after each input") == plain.pop("tally after each input") and to_json(odd) == to_json(plain)
