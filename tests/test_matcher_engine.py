"""The diagnosis end to end on small rules: cascades, roles, where, formats, healthy logs."""

from __future__ import annotations

import io
import json

import pytest

from generator.corpus.validated import Corpus
from generator.exports.rules import compile_rules
from generator.matcher import Diagnoser, to_json, to_markdown, to_text
from generator.corpus.model import Entry
from generator.matcher.native.re2scan import Re2Scanner, available

from conftest import ROOT


def _entry(id: str, category: str, severity: str, pattern: str | None, example: str | None, **extra) -> Entry:
    data = {
        "id": id, "title": f"Title {id}", "category": category, "severity": severity, "owner": "hardware",
        "summary": f"Summary of {id}.", "root_cause": "r",
        "fix": [{"text": f"Fix {id}.", "command": f"fix-{id}", "rung": "restart-app"}],
        "references": [{"title": "t", "url": "https://example.org/r"}],
    }
    if pattern:
        data["signatures"] = [{"id": "main", "pattern": pattern, "examples": [{"line": example, "source": "https://example.org/l"}]}]
    data.update(extra)
    return Entry.model_validate(data)


@pytest.fixture(scope="module")
def rules() -> dict:
    entries = [
        _entry("xid-79", "xid", "critical", None, None, xid={"code": 79, "name": "GPU has fallen off the bus"},
               causes=["nccl-watchdog-timeout"]),
        _entry("xid-45", "xid", "low", None, None, xid={"code": 45, "name": "Preemptive cleanup"}),
        _entry("xid-149", "xid", "high", None, None, xid={"code": 149, "name": "NVLink NETIR"}),
        _entry("cuda-oom", "cuda", "medium", r"CUDA out of memory\. Tried to allocate", "CUDA out of memory. Tried to allocate 2 GiB",
               causes=["nccl-watchdog-timeout"]),
        _entry("nccl-watchdog-timeout", "nccl", "high", r"Watchdog caught collective operation timeout",
               "[Rank 1] Watchdog caught collective operation timeout"),
        _entry("remap-pending", "hardware", "medium", r"^\s*Pending\s*: Yes\b", "        Pending        : Yes"),
        _entry("benign-note", "numerics", "info", r"OVERFLOW! Rank \d+ Skipping step", "OVERFLOW! Rank 0 Skipping step"),
    ]
    return compile_rules(Corpus(root=ROOT, entries=entries))


def _diagnose(rules: dict, text: str, re2: bool = False) -> dict:
    return Diagnoser(rules, scanner_factory=Re2Scanner.for_matcher if re2 else None).diagnose_text(text)


CASCADE = """\
[rank0]:[E321 02:07:08.408 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)
[rank1]:[E321 02:07:09.100 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)
Feb 15 17:37:45 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
"""


def _pasted(text: str, how: str) -> str:
    if how == "no-break spaces":  # copied from a rendered page or a chat client
        return text.replace(" ", "\u00a0")
    if how == "reply quote":  # quoted in a reply or a mail
        return "".join("> " + line for line in text.splitlines(True))
    quoted = _pasted(text, "reply quote")  # a reply's source: quoted, then HTML-escaped
    return quoted.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;")


@pytest.mark.parametrize("how", ["no-break spaces", "reply quote", "page source"])
def test_a_pasted_copy_reads_as_the_log_itself(real_diagnoser: Diagnoser, how: str) -> None:
    """What a paste adds on the way (no-break spaces, quote markers, HTML references) changes
    nothing in the report: same findings, roles, places and fields. Before clean() undid them,
    no-break spaces lost 281 of 582 right dev field cases, references 41, quote markers 9."""
    plain = real_diagnoser.diagnose_text(CASCADE)
    pasted = real_diagnoser.diagnose_text(_pasted(CASCADE, how))
    shape = lambda r: [(f["id"], f["role"], f["where"], f["fields"], f["count"]) for f in r["findings"]]  # noqa: E731
    assert shape(pasted) == shape(plain) and plain["findings"][0]["id"] == "xid-79"
    killed = real_diagnoser.diagnose_text(_pasted("Killed\n", how))  # a signature anchored at the line's start
    assert [f["id"] for f in killed["findings"]] == ["host-oom-kill"]


FIELD_DEV = ROOT / "tests" / "fixtures" / "field" / "dev" / "cases"


def _wrapped(text: str, width: int = 80) -> str:
    """As a terminal or a mail client hard-wraps: every line cut into rows of ``width`` characters."""
    return "".join("".join(line[i:i + width] + "\n" for i in range(0, max(len(line), 1), width))
                   for line in text.splitlines())


# dev field cases that bench/paste_eval.py lost when hard-wrapped at 80 columns (25 of 582 before
# the wrap was read), each a failure line cut in two or three
WRAP_LOST = ("nccl-009", "serving-008", "serving-010", "containers-402", "launchers-403", "jax-tf-406",
             "host-1302", "nccl-1510", "containers-1613")
# ...and when the whole log came JSON-escaped on one line (28 lost before)
ESCAPED_LOST = ("host-103", "driver-402", "nccl-407", "containers-902", "host-1004", "nccl-1110", "cuda-1510",
                "launchers-1508")


@pytest.mark.parametrize("case", WRAP_LOST)
def test_a_hard_wrapped_log_reads_as_the_log_itself(real_diagnoser: Diagnoser, case: str) -> None:
    text = (FIELD_DEV / f"{case}.log").read_text(encoding="utf-8", errors="replace")
    plain = real_diagnoser.diagnose_text(text)
    wrapped = real_diagnoser.diagnose_text(_wrapped(text))
    first = lambda r: ([f["id"] for f in r["findings"] if f["role"] != "info"] or  # noqa: E731
                       [f["id"] for f in r["findings"]] or [r["id"] for r in r["resembles"]])[:1]
    assert first(plain) and first(wrapped) == first(plain), (case, first(plain), first(wrapped))


@pytest.mark.parametrize("case", ESCAPED_LOST)
def test_a_log_escaped_onto_one_line_reads_as_the_log_itself(real_diagnoser: Diagnoser, case: str) -> None:
    text = (FIELD_DEV / f"{case}.log").read_text(encoding="utf-8", errors="replace")
    plain = real_diagnoser.diagnose_text(text)
    escaped = real_diagnoser.diagnose_text(text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + "\n")
    first = lambda r: ([f["id"] for f in r["findings"] if f["role"] != "info"] or  # noqa: E731
                       [r["id"] for r in r["resembles"]])[:1]
    assert first(plain) and first(escaped) == first(plain), (case, first(plain), first(escaped))
    assert all(f["first_line"] == 1 for f in escaped["findings"])  # the input's one line


def test_a_table_of_fixed_width_or_a_repeated_line_is_not_read_as_wrapped(real_diagnoser: Diagnoser) -> None:
    """Rows that fill one width but end at a border, or one line repeated, are no hard wrap:
    reading them joined would glue unrelated lines."""
    from generator.matcher.read import Chunk
    from generator.matcher.resemble import TailLines

    def width(text: str) -> int:
        tail = TailLines()
        tail.add(Chunk(text.encode(), 1))
        return tail.wrap_width()

    smi = ("+-----------------------------------------------------------------------------+\n"
           "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |\n"
           "|-------------------------------+----------------------+----------------------+\n"
           "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n")
    assert width(smi) == 0
    repeated = "W1203 warn: some setting is deprecated and will be removed in a future release of this\n" * 6
    assert width(repeated) == 0
    cut = _wrapped("RuntimeError: CUDA error: an illegal memory access was encountered while launching the kernel "
                   "named flash_fwd_kernel on device 0 of this node after step 1200\nnext\n")
    assert width(cut) == 80


@pytest.mark.parametrize("re2", [False, True] if available() else [False])
def test_root_cause_leads_and_collateral_follows(rules: dict, re2: bool) -> None:
    report = _diagnose(rules, CASCADE, re2)
    ids = [(f["id"], f["role"]) for f in report["findings"]]
    assert ids == [("xid-79", "root"), ("nccl-watchdog-timeout", "collateral")]
    root, collateral = report["findings"]
    assert root["where"] == {"host": "node7", "pci": "0000:3b:00", "time": "Feb 15 17:37:45"}
    assert root["fields"]["xid"] == 79
    assert collateral["count"] == 2 and collateral["caused_by"] == ["xid-79"]
    assert collateral["where"]["rank"] == 0
    assert report["initiating"]["entry"] == "xid-79" and report["initiating"]["host"] == "node7"


def test_with_a_scanner_factory_the_python_scanner_is_never_built(rules: dict, monkeypatch) -> None:
    """The browser's Diagnoser takes the JavaScript prefilter: building the pure-Python scanner
    as well cost its start-up time for nothing. Without a factory it is built on first use."""
    import generator.matcher.match as match

    real, built = match.LiteralScanner, []
    monkeypatch.setattr(match, "LiteralScanner", lambda anchors: built.append(1) or real(anchors))
    report = Diagnoser(rules, scanner_factory=lambda matcher: real(matcher.anchors)).diagnose_text(CASCADE)
    assert built == []
    assert report == _diagnose(rules, CASCADE) and built == [1]


def test_driver_cause_suffix_makes_xid_45_collateral(rules: dict) -> None:
    text = ("NVRM: Xid (PCI:0000:dc:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 0x0 0x0 0x0 0x0)\n"
            "NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149\n") * 3
    report = _diagnose(rules, text)
    assert [(f["id"], f["role"]) for f in report["findings"]] == [("xid-149", "root"), ("xid-45", "collateral")]


def test_unknown_xid_is_reported_without_a_page(rules: dict) -> None:
    report = _diagnose(rules, "NVRM: Xid (PCI:0000:01:00): 62, 0096(1c54) 00000000 00000000\n")
    (f,) = report["findings"]
    assert f["id"] == "xid-62" and f["url"] is None and "not described" in f["title"]


def test_healthy_log_has_no_failure(rules: dict) -> None:
    text = "epoch 1 loss 0.52\nNCCL INFO Bootstrap : Using eth0\nOVERFLOW! Rank 0 Skipping step\nNVRM: loading NVIDIA UNIX x86_64 Kernel Module\n"
    report = _diagnose(rules, text)
    assert [f["role"] for f in report["findings"]] == ["info"]
    assert report["initiating"] is None and report["verdict"] == "no known failure found"


def test_progress_bar_carriage_returns_and_ansi(rules: dict) -> None:
    text = " 10%|#   |\r 20%|##  |\r\x1b[31mCUDA out of memory. Tried to allocate 2 GiB\x1b[0m\nnext\n"
    report = _diagnose(rules, text)
    (f,) = report["findings"]
    assert f["id"] == "cuda-oom" and f["first_line"] == 1
    assert f["evidence"][0]["text"] == "CUDA out of memory. Tried to allocate 2 GiB"


def test_formats_render_the_same_report(rules: dict) -> None:
    report = _diagnose(rules, CASCADE)
    data = json.loads(to_json(report))
    assert data["schema"] == "kb.diagnosis/2" and data["input"] == {"lines": 3, "bytes": len(CASCADE), "files": 1}
    for key in ("id", "title", "severity", "role", "score", "count", "first_line", "where", "fields", "evidence"):
        assert key in data["findings"][0]
    text = to_text(report, "job.log")
    assert "ROOT CAUSE: Title xid-79" in text and "COLLATERAL: Title nccl-watchdog-timeout" in text
    assert "likely caused by: Title xid-79" in text and "3 | Feb 15 17:37:45 node7 kernel" in text
    md = to_markdown(report, "job.log")
    assert md.startswith("### Diagnosis of `job.log`") and "**Root cause:** [Title xid-79](entries/xid-79/)" in md
    assert "```text\n3: Feb 15" in md


@pytest.mark.skipif(not available(), reason="google-re2 is not installed")
def test_re2_and_python_scanners_agree_on_every_real_log() -> None:
    """The CLI's RE2 prefilter must never change a diagnosis, only its speed."""
    from generator.cli.diagnose import ensure_rules

    real = ensure_rules(None, ROOT / "kb" / "entries")
    python, fast = Diagnoser(real), Diagnoser(real, scanner_factory=Re2Scanner.for_matcher)
    logs = sorted((ROOT / "tests" / "fixtures" / "logs" / "cases").glob("*.log"))
    dev = ROOT.parent / "shared" / "logs-dev" / "cases"
    logs += sorted(dev.glob("*.log")) if dev.is_dir() else []
    assert logs
    tricky = b"  5%|#  |\r  exitcode  : -9 (pid: 14750)\r 6%|## |\nRuntimeError: CUDA error: an illegal memory access was encountered\r\n"
    for data in [p.read_bytes() for p in logs] + [tricky]:
        a = python.diagnose(io.BytesIO(data))
        b = fast.diagnose(io.BytesIO(data))
        assert a == b


@pytest.mark.skipif(not available(), reason="google-re2 not installed")
def test_re2_groups_stay_within_the_dfa_and_find_what_one_alternation_finds(monkeypatch) -> None:
    """All signatures in one RE2 alternation outgrew the DFA's memory (RE2 then scans ~30x slower):
    the scanner cuts them into groups of bounded program size; the lines found are the same."""
    import re2

    from generator.cli.diagnose import ensure_rules
    from generator.matcher.native import re2scan

    real = ensure_rules(None, ROOT / "kb" / "entries")
    matcher = Diagnoser(real).matcher
    builtin = [a["text"] for a in matcher.rules["anchors"] if a.get("builtin")]
    parts = re2scan.pattern_parts(matcher.patterns, builtin)
    whole = re2.compile(b"(?m)" + b"|".join(text for text, _ in parts), re2scan.group_options())
    assert whole.programsize > re2scan.GROUP_PROGRAM_SIZE  # the corpus is past what one group may hold
    groups = re2scan.group_parts(parts, re2scan.GROUP_PROGRAM_SIZE)
    assert len(groups) > 1 and [t for g in groups for t in g] == [t for t, _ in parts]  # all kept, in order
    sizes = dict(parts)
    assert all(sum(sizes[t] for t in g) <= re2scan.GROUP_PROGRAM_SIZE for g in groups if len(g) > 1)
    scanner = Re2Scanner.for_matcher(matcher)
    assert scanner.group_count == len(groups)
    data = b"".join(p.read_bytes() for p in sorted((ROOT / "tests" / "fixtures" / "logs" / "cases").glob("*.log")))
    monkeypatch.setattr(re2scan, "GROUP_PROGRAM_SIZE", 10 ** 9)
    single = Re2Scanner.for_matcher(matcher)
    assert single.group_count == 1
    assert scanner.candidate_lines(data) == sorted(single.candidate_lines(data))
    assert len(scanner.candidate_lines(data)) > 50


@pytest.mark.skipif(not available(), reason="google-re2 not installed")
def test_an_re2_match_running_over_a_newline_is_verified_line_by_line() -> None:
    # RE2 scans the chunk, where '^\s*' may start on the blank line above (a real Open MPI banner,
    # walk hpc-fabric 16): the hit belongs to the line that matches on its own, as in Python
    entry = _entry("munge", "distributed", "high", r"^\s*Component:\s+munge\s*$", "Component: munge")
    rules = compile_rules(Corpus(root=ROOT, entries=[entry]))
    text = "Framework: psec\n\nComponent: munge\n\nIt looks like pmix_init failed\n"
    python = _diagnose(rules, text)
    fast = _diagnose(rules, text, re2=True)
    assert fast == python
    assert python["findings"][0]["evidence"][0]["line"] == 3


def test_hyperscan_and_python_scanners_agree_on_every_real_log() -> None:
    """The Hyperscan prefilter must never change a diagnosis either: every real fixture, field log
    and job log gives the same report as the pure-Python scanner."""
    hsscan = pytest.importorskip("generator.matcher.native.hsscan")
    if not hsscan.available():
        pytest.skip("hyperscan is not installed")
    from generator.cli.diagnose import ensure_rules

    real = ensure_rules(None, ROOT / "kb" / "entries")
    python, fast = Diagnoser(real), Diagnoser(real, scanner_factory=hsscan.HyperscanScanner.for_matcher)
    fixtures = ROOT / "tests" / "fixtures"
    logs = sorted((fixtures / "logs" / "cases").glob("*.log")) + sorted((fixtures / "field" / "dev" / "cases").glob("*.log"))
    logs += sorted((fixtures / "multi").glob("*/original.log"))
    tricky = b"  5%|#  |\r  exitcode  : -9 (pid: 14750)\r 6%|## |\nRuntimeError: CUDA error: an illegal memory access was encountered\r\n"
    for data in [p.read_bytes() for p in logs] + [tricky]:
        assert python.diagnose(io.BytesIO(data)) == fast.diagnose(io.BytesIO(data))


def test_a_failure_logged_later_on_the_same_clock_is_not_the_cause(rules: dict) -> None:
    # cuda-oom can cause the watchdog timeout, but here it comes 2,000 s after it on the same clock
    text = ("[ 100.000000] [Rank 1] Watchdog caught collective operation timeout\n"
            "[2100.000000] CUDA out of memory. Tried to allocate 2 GiB\n")
    report = _diagnose(rules, text)
    assert sorted((f["id"], f["role"]) for f in report["findings"]) == [("cuda-oom", "root"), ("nccl-watchdog-timeout", "root")]
    # without timestamps, line order alone does not decide: a pasted app log often precedes dmesg
    text = "[Rank 1] Watchdog caught collective operation timeout\nCUDA out of memory. Tried to allocate 2 GiB\n"
    report = _diagnose(rules, text)
    assert [(f["id"], f["role"]) for f in report["findings"]] == [("cuda-oom", "root"), ("nccl-watchdog-timeout", "collateral")]


def test_a_session_fed_in_pieces_gives_the_same_report(rules: dict) -> None:
    data = (CASCADE * 50).encode()
    whole = Diagnoser(rules).diagnose(io.BytesIO(data))
    session = Diagnoser(rules).session()
    for i in range(0, len(data), 777):  # pieces that cut lines anywhere
        session.feed(data[i:i + 777])
    assert session.finish() == whole


@pytest.mark.parametrize("text", ["", "nothing to see here\n", "[deepspeed] OVERFLOW! Rank 0 Skipping step\n"])
def test_every_format_renders_a_report_without_failures(rules: dict, text: str) -> None:
    report = _diagnose(rules, text) if text else Diagnoser(rules).diagnose(io.BytesIO(b""))
    assert "No known failure found" in to_text(report) and "No known failure found" in to_markdown(report)
    assert json.loads(to_json(report))["verdict"] == "no known failure found"
    notes = bool(report["findings"])  # the DeepSpeed overflow line is a note (severity info)
    assert notes == ("[deepspeed] OVERFLOW" in text)
    for rendered in (to_text(report), to_markdown(report)):  # never "matched nothing" above a listed note
        assert ("matched nothing in the atlas" in rendered) is not notes
        assert ("matched only notes" in rendered) is notes


def test_a_finding_inside_an_nvidia_smi_report_names_the_gpu_above_it(rules: dict) -> None:
    report = "GPU 00000000:07:00.0\n    Remapped Rows\n        Pending : No\n" \
             "GPU 00000000:10:1C.0\n    Product Name : A100\n" + "    Filler : x\n" * 300 + \
             "    Remapped Rows\n        Pending : Yes\n"
    found = _diagnose(rules, report)["findings"]
    assert [(f["id"], f["where"]["pci"]) for f in found] == [("remap-pending", "0000:10:1c")]


def test_a_rank_named_on_a_later_line_of_the_same_finding_is_used(rules: dict) -> None:
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n"
            "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n")
    report = _diagnose(rules, text)
    assert report["findings"][0]["where"]["rank"] == 3
    assert report["initiating"]["rank"] == 3 and report["initiating"]["line"] == 1


def test_a_port_address_is_a_device_and_the_gpu_behind_it_is_named_from_its_collateral() -> None:
    entries = [
        _entry("aer", "host", "high", r"PCIe Bus Error: severity=", "pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected",
               causes=["gpu-gone"]),
        _entry("gpu-gone", "hardware", "high", r"Unable to determine the device handle for GPU",
               "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error"),
    ]
    rules = compile_rules(Corpus(root=ROOT, entries=entries))
    text = ("[  +0.000005] pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer\n"
            "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error\n")
    report = _diagnose(rules, text)
    aer, gone = report["findings"]
    assert aer["where"] == {"device": "0000:00:03"} and gone["where"] == {"pci": "0000:03:00"}
    assert report["initiating"]["pci"] == "0000:03:00" and report["initiating"]["device"] == "0000:00:03"
    assert "PCI device 0000:00:03" in to_text(report)
    assert "FAILED FIRST: GPU 0000:03:00, PCI device 0000:00:03 (line 1)" in to_text(report)
    assert "**Failed first:** GPU 0000:03:00, PCI device 0000:00:03 (line 1)" in to_markdown(report)


def test_of_two_launcher_summaries_the_earlier_first_failure_is_named() -> None:
    entries = [_entry("child-failed", "distributed", "high", r"Root Cause \(first observed failure\):",
                      "Root Cause (first observed failure):")]
    rules = compile_rules(Corpus(root=ROOT, entries=entries))

    def summary(time: str, rank: int) -> str:
        return (f"Root Cause (first observed failure):\n[0]:\n  time      : {time}\n  host      : gpu187\n"
                f"  rank      : {rank} (local_rank: 0)\n  exitcode  : 1 (pid: 19401)\n")

    later_first_in_file = summary("2023-06-03_22:45:52", 0) + "-" * 20 + "\n" + summary("2023-06-03_22:45:01", 4)
    assert _diagnose(rules, later_first_in_file)["initiating"]["rank"] == 4
    without_times = later_first_in_file.replace("  time      : 2023-06-03_22:45:52\n", "")
    assert _diagnose(rules, without_times)["initiating"]["rank"] == 0  # no time to compare: the first block stands


def test_a_line_without_a_timestamp_keeps_its_place_among_timestamped_lines() -> None:
    """A rank's traceback carries no time; the launcher's lines around it do. An untimed line takes
    the time of the last timed line above it in its input (or the first below it), so a later
    timestamped line does not jump ahead of an earlier untimed failure; across inputs the times decide."""
    entries = [_entry("early-fault", "cuda", "medium", r"alpha engine fault", "alpha engine fault"),
               _entry("late-report", "distributed", "medium", r"beta barrier report", "beta barrier report"),
               _entry("start-note", "distributed", "medium", r"gamma start note", "gamma start note")]
    rules = compile_rules(Corpus(root=ROOT, entries=entries))

    def order(text: str) -> list[str]:
        return [f["id"] for f in _diagnose(rules, text)["findings"]]

    untimed_first = "[rank0]: alpha engine fault\n[2024-06-01 12:00:05,000] beta barrier report\n"
    assert order(untimed_first) == ["early-fault", "late-report"]
    after_a_timed_line = ("[2024-06-01 12:00:00,000] gamma start note\n[rank0]: alpha engine fault\n"
                          "[2024-06-01 12:00:05,000] beta barrier report\n")
    assert order(after_a_timed_line) == ["start-note", "early-fault", "late-report"]
    timeline = _diagnose(rules, after_a_timed_line)["timeline"]
    assert [ev["finding"] for ev in timeline] == ["start-note", "early-fault", "late-report"]


@pytest.mark.parametrize("prefixes, key, values", [
    (["3: ", "4: "], "rank", [3, 4]),                                   # torchrun's local-rank prefix
    (["[1,12]<stdout>: ", "[1,13]<stdout>: "], "rank", [12, 13]),       # mpirun --tag-output
    (["10.0.0.1:100:200 [0] ", "10.0.0.2:100:200 [0] "], "host", ["10.0.0.1", "10.0.0.2"]),  # NCCL's host:pid:tid prefix
])
def test_a_repeated_line_keeps_the_place_its_own_prefix_names(rules: dict, prefixes: list[str], key: str, values: list) -> None:
    """The matcher remembers what a line hit by its text without the timestamp; a prefix that
    names a rank or host is not a timestamp, so each place is counted as its own."""
    line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n"
    text = "".join(p + line for p in prefixes for _ in range(3))
    finding = _diagnose(rules, text)["findings"][0]
    assert [(p[key], p["count"]) for p in finding["places"]] == [(v, 3) for v in values]


def test_lines_that_differ_only_in_their_timestamps_are_matched_once(rules: dict) -> None:
    diagnoser = Diagnoser(rules)
    stamps = ["[ 12.000001] ", "[1234.5] ", "2024-01-01T10:00:00.123Z ", "[2024-01-01 10:00:05,123] ",
              "Nov  5 01:15:00 ", "2024-01-01 10:00:00 [ 99.250000] "]
    lines = [f"{s}CUDA out of memory. Tried to allocate {n} GiB\n" for s in stamps for n in (2, 3)]
    report = diagnoser.diagnose_text("".join(lines * 5))
    assert report["findings"][0]["count"] == len(lines) * 5
    # one memo entry per timestamp shape and message: the digits of a timestamp are not part of it
    assert len(diagnoser.matcher.memo) == len({(s.translate(str.maketrans("123456789", "000000000")), n)
                                               for s in stamps for n in (2, 3)})


def test_counting_a_repeated_line_gives_what_matching_it_afresh_gives(rules: dict) -> None:
    """A repeated line is counted without building its hit (``Repeat``); the report must be the
    one the full path gives, places, counts, last lines and evidence included."""
    lines = [f"[{100 + i}.5] [rank{i % 3}]: CUDA out of memory. Tried to allocate 2 GiB\n" for i in range(40)]
    lines += [f"[{200 + i}.5] GPU{i % 2} Watchdog caught collective operation timeout\n" for i in range(20)]
    text = "".join(lines)
    counted = Diagnoser(rules).diagnose_text(text)
    fresh = Diagnoser(rules)
    fresh.matcher.memo = _Forgetful()
    assert json.loads(to_json(fresh.diagnose_text(text))) | {"elapsed": None} == \
        json.loads(to_json(counted)) | {"elapsed": None}
    assert counted["findings"][0]["places"][0]["count"] == 14


class _Forgetful(dict):
    """A memo that never remembers: every line is matched afresh."""

    def __setitem__(self, key, value) -> None:  # noqa: ANN001
        pass


def test_of_two_entries_matched_on_the_same_line_the_more_specific_comes_first() -> None:
    line = ("E1128 19:48:41.908254 12927 driver.c:196] could not start driver service: load library failed: "
            "libcuda.so.1: cannot open shared object file: no such file or directory")
    generic = _entry("aaa-generic", "cuda", "medium", r"libcuda\.so\.1: cannot open shared object file", line)
    specific = _entry("zzz-specific", "platform", "medium", r"could not start driver service: load library failed: libcuda", line)
    for entries in ([generic, specific], [specific, generic]):  # whatever the corpus order
        rules = compile_rules(Corpus(root=ROOT, entries=entries))
        assert [f["id"] for f in Diagnoser(rules).diagnose_text(line + "\n")["findings"]] == ["zzz-specific", "aaa-generic"]


def test_a_wrapper_is_collateral_of_any_other_failure_but_root_when_alone() -> None:
    # a launcher's "a worker failed" banner, high severity, and a medium failure it lists nowhere
    banner = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:"
    wrapper = _entry("launcher-child-failed", "distributed", "high", r"elastic\.multiprocessing\.errors\.ChildFailedError", banner,
                     wrapper=True)
    plain = _entry("launcher-plain", "distributed", "high", r"elastic\.multiprocessing\.errors\.ChildFailedError", banner)
    cause = _entry("ext-build", "framework", "low", r"Error building extension '[\w.]{1,60}'", "Error building extension 'fused_adam'")
    other_wrapper = _entry("worker-died", "framework", "high", r"Worker proc [\w-]{1,40} died unexpectedly",
                           "Worker proc VllmWorker-0 died unexpectedly", wrapper=True)
    text = f"Error building extension 'fused_adam'\n{banner}\n"
    with_flag = Diagnoser(compile_rules(Corpus(root=ROOT, entries=[wrapper, cause]))).diagnose_text(text)
    assert [(f["id"], f["role"]) for f in with_flag["findings"]] == [("ext-build", "root"), ("launcher-child-failed", "collateral")]
    assert with_flag["findings"][1]["caused_by"] == ["ext-build"]
    # the same banner without the flag outranks the low-severity failure: what the flag changes
    without = Diagnoser(compile_rules(Corpus(root=ROOT, entries=[plain, cause]))).diagnose_text(text)
    assert [(f["id"], f["role"]) for f in without["findings"]] == [("launcher-plain", "root"), ("ext-build", "root")]
    # alone, or beside another wrapper only, a wrapper stays a root cause
    rules = compile_rules(Corpus(root=ROOT, entries=[wrapper, other_wrapper]))
    alone = Diagnoser(rules).diagnose_text(f"Worker proc VllmWorker-0 died unexpectedly\n{banner}\n")
    assert sorted((f["id"], f["role"]) for f in alone["findings"]) == [("launcher-child-failed", "root"), ("worker-died", "root")]
    # a failure that shows clearly later on the same clock is not what the banner reports
    late = Diagnoser(compile_rules(Corpus(root=ROOT, entries=[wrapper, cause]))).diagnose_text(
        f"2026-01-01T10:00:00Z {banner}\n2026-01-01T11:00:00Z Error building extension 'fused_adam'\n")
    assert sorted((f["id"], f["role"]) for f in late["findings"]) == [("ext-build", "root"), ("launcher-child-failed", "root")]


def test_a_line_a_note_was_written_for_is_not_a_failure_though_it_quotes_one() -> None:
    quoted = ("W se_gpu_pjrt_client.cc:1038] Unable to enable peer access between GPUs 0 and 1; status: INTERNAL: "
              "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED: peer access is not supported between these two devices")
    failure = _entry("p2p-unsupported", "cuda", "high", r"peer access is not supported between these two devices",
                     "NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices")
    note = _entry("peer-access-note", "cuda", "info", r"Unable to enable peer access between GPUs [0-9]+ and [0-9]+", quoted)
    rules = compile_rules(Corpus(root=ROOT, entries=[failure, note]))
    for re2 in ([False, True] if available() else [False]):
        report = _diagnose(rules, quoted + "\n", re2=re2)
        assert [(f["id"], f["severity"]) for f in report["findings"]] == [("peer-access-note", "info")]
        assert report["initiating"] is None
        # the failure's own line, and the note's words on another line, still count as before
        other = _diagnose(rules, quoted + "\nNCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported "
                          "between these two devices\n", re2=re2)
        assert [(f["id"], f["role"]) for f in other["findings"]][0] == ("p2p-unsupported", "root")
    # within one progress-bar line, the note covers its own segment only
    both = _diagnose(rules, "peer access is not supported between these two devices\r" + quoted + "\n")
    assert {f["id"] for f in both["findings"]} == {"p2p-unsupported", "peer-access-note"}
