"""Parsing real line shapes: timestamps, ranks, hosts, Xid and SXid variants."""

from __future__ import annotations

import pytest

from generator.matcher.parse import parse_context, parse_smi_gpu, parse_sxid, parse_time, parse_xid

from conftest import ROOT


@pytest.mark.parametrize(
    "line, kind, seconds",
    [
        ("[82659.755847] NVRM: Xid", "uptime", 82659.755847),
        ("[  975.844436] NVRM: Xid", "uptime", 975.844436),
        ("6,3964,206764307,-;nvidia-nvswitch2: open", "uptime", 206.764307),
        ("[Fri Aug 30 11:43:09 2024] NVRM: Xid", "wall", 1725018189.0),
        ("2024-08-30T11:43:09.500Z ERROR x", "wall", 1725018189.5),
        ("[2024-08-30T13:43:09+02:00] slurmstepd: error", "wall", 1725018189.0),
        ("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog", "wall-noyear", None),
        ("Feb 15 17:37:45 gpu-node-a kernel: [82659.755847] NVRM: Xid", "wall-noyear", None),
        # pasted as a Markdown code block: indented four spaces or a tab
        ("    [1084456.074562] NVRM: Xid (PCI:0000:09:00): 79", "uptime", 1084456.074562),
        ("\tFeb 15 17:37:45 gpu-node-a kernel: NVRM: Xid", "wall-noyear", None),
        ("Apr 08 09:31:09 kernel: NVRM: Xid", "wall-noyear", None),  # journald line without its host
    ],
)
def test_timestamps(line: str, kind: str, seconds: float | None) -> None:
    parsed = parse_time(line)
    assert parsed is not None and parsed[0] == kind
    if seconds is not None:
        assert parsed[1] == pytest.approx(seconds)


def test_glog_and_syslog_order_within_a_log() -> None:
    a = parse_time("E0810 15:36:05.945000 1 x.cpp:1] first")
    b = parse_time("E0810 15:36:06.100000 1 x.cpp:1] second")
    assert a and b and a[0] == b[0] == "wall-noyear" and a[1] < b[1]


@pytest.mark.parametrize(
    "line, rank, host",
    [
        ("[rank3]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught", 3, None),
        ("[default5]:RuntimeError: CUDA error: an illegal memory access was encountered", 5, None),
        ("2: RuntimeError: CUDA out of memory.", 2, None),
        ("node07:2811:2811 [1] NCCL INFO Bootstrap : Using eth0", None, "node07"),
        ("Feb 15 17:37:45 gpu-node-a kernel: NVRM: Xid (PCI:0000:3b:00): 79,", None, "gpu-node-a"),
        ("srun: error: node12: task 7: Out Of Memory", 7, "node12"),
        # a journald line without its host: the program ("kernel:") is not a host
        ("Apr 08 09:31:09 kernel: NVRM: Xid (PCI:0000:3b:00): 79,", None, None),
        ("Apr 08 09:31:09 dgx-3 kernel: NVRM: Xid (PCI:0000:3b:00): 79,", None, "dgx-3"),
        # TensorRT's error code where torchrun puts a rank (TensorRT #2177, issue threads): not a rank
        ("6: The engine plan file is not compatible with this version of TensorRT, expecting library version 8.0.0 "
         "got 8.0.1, please rebuild.", None, None),
        ("3: [executionContext.cpp::setInputShape::2288] Error Code 3: API Usage Error", None, None),
        # ...unless torchrun's own prefix comes first
        ("2: 6: The engine plan file is not compatible with this version of TensorRT", 2, None),
    ],
)
def test_rank_and_host(line: str, rank: int | None, host: str | None) -> None:
    ctx = parse_context(line)
    assert (ctx.rank, ctx.host) == (rank, host)


@pytest.mark.parametrize(
    "line, code, pci, pid, process",
    [
        ("NVRM: Xid (0000:03:00): 14, Channel 00000001", 14, "0000:03:00", None, None),
        ("NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.", 79, "0000:2b:00", None, None),
        ("NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", 79, "0000:05:00", None, None),
        ("NVRM: Xid (PCI:0000:61:00): 45, pid=1496200, name=distprovers-gpu, Ch 0000000a", 45, "0000:61:00", 1496200, "distprovers-gpu"),
        ("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.", 63, "0000:10:1c", 1896, None),
    ],
)
def test_xid_variants(line: str, code: int, pci: str, pid: int | None, process: str | None) -> None:
    event = parse_xid(line)
    assert event is not None
    assert (event.code, event.pci, event.pid, event.process) == (code, pci, pid, process)


def test_xid_cause_recovery_and_nvlink5_fields() -> None:
    e = parse_xid("NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149")
    assert e and e.caused_by == 149
    e = parse_xid("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)")
    assert e and e.recovery_action == "Node Reboot Required"
    e = parse_xid("NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)")
    assert e and e.nvlink == {"unit": "RLW_RXPIPE", "severity": "Nonfatal", "link": 13, "intr_info": "0x0409a0c2",
                              "error_status": "0x00000008"}


def test_not_an_xid() -> None:
    assert parse_xid("NVRM: GPU at PCI:0000:2b:00: GPU-bc0fa0b9-cac2-f507-b715-9bebdb69c71e") is None


def test_sxid() -> None:
    e = parse_sxid("nvidia-nvswitch2: SXid (PCI:0000:85:00.0): 12028, Non-fatal, Link 61 egress non-posted PRIV error (First)")
    assert e and (e.switch, e.code, e.fatal) == (2, 12028, False)
    e = parse_sxid("nvidia-nvswitch0: SXid (PCI:0000:00:00.0): 20034, Fatal, Link 30 LTSSM Fault Up")
    assert e and e.fatal is True


def test_nvidia_smi_report_names_its_gpu() -> None:
    report = ("Attached GPUs : 2\nGPU 00000000:07:00.0\n    Product Name : A100\n"
              "GPU 00000002:10:1C.0\n    Remapped Rows\n        Pending : Yes\n")
    assert parse_smi_gpu(report) == "0002:10:1c"  # the last header above the field
    assert parse_smi_gpu("    Pending : Yes\n") is None
    assert parse_smi_gpu("GPU 00000000:07:00.0 has something to say\n") is None  # not a header line


def test_an_xid_as_the_kubernetes_device_plugin_reports_it() -> None:
    """The plugin's two message formats (internal/rm/health.go, and the older
    'All devices will go unhealthy' form): the code counts as that Xid, the GPU is a UUID."""
    from generator.matcher.parse import parse_xid

    event = parse_xid("I1105 01:26:08.071329       1 health.go:169] XidCriticalError: Xid=48 on Device="
                      "GPU-d23d91a3-5c1e-4b7a-9f2e-3a4b5c6d7e8f; marking device as unhealthy.")
    assert event is not None and event.code == 48 and event.device == "GPU-d23d91a3-5c1e-4b7a-9f2e-3a4b5c6d7e8f"
    assert event.pci == "" and "marking device as unhealthy" in event.text
    older = parse_xid("2019/04/30 08:10:02 XidCriticalError: Xid=79, All devices will go unhealthy.")
    assert older is not None and older.code == 79 and older.device is None
    assert parse_xid("Ignoring the following XIDs for health checks: [13 31 43 45 68 109]") is None


def test_an_xid_as_dcgm_reports_it() -> None:
    """DCGM's health watch words an Xid its own way (DCGM_FR_XID_ERROR_MSG); quoted in a node
    condition it comes with the GPU's PCI address and UUID (NVSentinel #911)."""
    from generator.matcher.parse import parse_xid

    event = parse_xid("ErrorCode:DCGM_FR_XID_ERROR GPU:4 PCI:0000:c4:00.0 GPU_UUID:GPU-d1816eb1-2926-4fbc-13f6-1cf1ba1b921b "
                      "Detected XID 31 for GPU 4 Please consult the documentation for details of this XID.")
    assert event is not None and event.code == 31 and event.pci == "0000:c4:00"
    assert event.device == "GPU-d1816eb1-2926-4fbc-13f6-1cf1ba1b921b"
    bare = parse_xid("Detected XID 79 for GPU 0")
    assert bare is not None and bare.code == 79 and bare.pci == "" and bare.device is None
    assert parse_xid("Detected fatal NvSwitch SXID 12028") is None  # an SXid, not an Xid
    assert parse_xid("Detected XID errors on this node earlier") is None


def test_an_xid_as_a_metrics_exporter_reports_it() -> None:
    """dcgm-exporter and GPUd publish Xids as Prometheus samples: DCGM_FI_DEV_XID_ERRORS's value is the
    last Xid code (DCGM #227; an err_code label repeats it since dcgm-exporter PR #309), the
    active-Xid and count metrics name it in an xid label. A value of 0 means no Xid; HELP lines none."""
    from generator.matcher.parse import parse_xid

    labelled = parse_xid('DCGM_FI_DEV_XID_ERRORS{err_code="45", err_msg="Preemptive cleanup, due to previous errors '
                         '-- Most likely to see when running multiple cuda", job="dcgm-exporter"}')
    assert labelled is not None and labelled.code == 45 and labelled.device is None
    active = parse_xid('DCGM_FI_DEV_XID_ERRORS_ACTIVE{gpu="0",UUID="GPU-b9f9e81b-bee7-34bc-af17-132ef6592740",device='
                       '"nvidia0",window_size_in_ms="300000",xid="42"} 1')
    assert active is not None and active.code == 42 and active.device == "GPU-b9f9e81b-bee7-34bc-af17-132ef6592740"
    valued = parse_xid('DCGM_FI_DEV_XID_ERRORS{gpu="1",UUID="GPU-c9f9e81b-bee7-34bc-af17-132ef6592741",Hostname="n1"} 79')
    assert valued is not None and valued.code == 79
    gpud = parse_xid('accelerator_nvidia_xid_errors_total{uuid="GPU-c9f9e81b-bee7-34bc-af17-132ef6592741",xid="94"} 3')
    assert gpud is not None and gpud.code == 94
    assert parse_xid('DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-b9f9e81b-bee7-34bc-af17-132ef6592740"} 0') is None
    assert parse_xid('DCGM_FI_DEV_XID_ERRORS_ACTIVE{gpu="0",xid="42"} 0') is None  # none in the window
    assert parse_xid("# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.") is None
    assert parse_xid('DCGM_EXP_XID_ERRORS_COUNT{gpu="0",window_size_in_ms="300000"} 2') is None  # no code named


def test_journalctl_json_lines_give_time_and_host() -> None:
    from generator.matcher.parse import parse_context, parse_time

    line = ('{"__CURSOR":"s=1","__REALTIME_TIMESTAMP":"1700000000123456","_HOSTNAME":"gpu-node-7",'
            '"MESSAGE":"NVRM: Xid (PCI:0000:3b:00): 79, pid=2345, name=python, GPU has fallen off the bus."}')
    assert parse_time(line) == ("wall", 1700000000.123456)
    assert parse_context(line).host == "gpu-node-7"


@pytest.mark.parametrize("line, code, pci", [
    ("kernel: NVRM: Xid (PCI:0000:1a:00): 79", 79, "0000:1a:00"),  # a line that ends at the code
    ('"NVRM: Xid (PCI:0000:9b:00): 119"', 119, "0000:9b:00"),  # quoted by an agent
    ('        "reason": "XID 79 (GPU has fallen off the bus) detected on PCI:0000:04:00",', 79, "0000:04:00"),  # GPUd state
    ('        "message": "xid 119 detected by dmesg (47 minutes ago)",', 119, ""),  # GPUd event
    # GPUd's reasons over its releases (components/accelerator/nvidia/xid/health_state.go and its tests)
    ("XID 123 detected on PCI:0000:9b:00", 123, "0000:9b:00"),
    ("XID 123(SPI PMU RPC Write Failure) detected on PCI:0000:9b:00", 123, "0000:9b:00"),
    ("reason: XID 79 ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS GPU has fallen off the bus detected on GPU "
     "PCI:0000:ae:00 UUID:GPU-2a1b3c4d-0000-1111-2222-333344445555", 79, "0000:ae:00"),
    ("XID 149.37 (err status 0x00000000) NVLINK_NETIR_ERROR detected on GPU PCI:0000:00:00", 149, "0000:00:00"),
    ("XID 12  detected on GPU PCI:0000:17:00", 12, "0000:17:00"),  # a code without catalog text: two spaces
])
def test_xid_lines_as_monitoring_agents_print_them(line: str, code: int, pci: str) -> None:
    from generator.matcher.parse import parse_xid

    event = parse_xid(line)
    assert event is not None and event.code == code and event.pci == pci


@pytest.mark.parametrize("line", [
    "SXID 12028(NVLink link down) detected on PCI:0000:05:00",  # an NVSwitch's, not a GPU's Xid
    "XIDComponent is healthy",
    "checking xid 79 handling in the detector (no event)",
    "XID 79 was not detected on PCI:0000:04:00 after the reset",  # prose: GPUd puts only catalog text there
    "no xid 119 has been detected by dmesg since boot",
])
def test_not_an_xid_from_a_monitoring_agent(line: str) -> None:
    from generator.matcher.parse import parse_xid

    assert parse_xid(line) is None


def test_the_rank_in_vllms_worker_prefix() -> None:
    from generator.matcher.parse import parse_context

    # vllm-project/vllm#15182
    assert parse_context("(VllmWorker rank=5 pid=3073)     self.worker.load_model()").rank == 5
    assert parse_context("(VllmWorkerProcess pid=2421) ERROR 10-14 12:32:47 multiproc_worker_utils.py:233] x").rank is None


def test_the_rank_guard_never_hides_a_rank() -> None:
    """may_name_rank (one bytes search) may say yes wrongly but never no wrongly: over every line
    of the real logs and some made-up ones, a line it turns away has no rank for parse_rank."""
    from generator.matcher.parse import may_name_rank, parse_rank  # noqa: PLC0415

    fixtures = ROOT / "tests" / "fixtures"
    lines = ["3: Traceback (most recent call last):", "[default7]:[rank7]: RuntimeError", "\u0663: x",
             "(VllmWorker rank=5 pid=3073) INFO", "[1,12]<stdout>: step 5", "srun: error: node1: task 3: Exited"]
    for path in sorted((fixtures / "logs" / "cases").glob("*.log")) + sorted((fixtures / "field" / "dev" / "cases").glob("*.log")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    with_rank = 0
    for line in lines:
        rank = parse_rank(line)
        with_rank += rank is not None
        assert may_name_rank(line.encode()) or rank is None, line
    assert with_rank > 50  # the check saw lines that do name a rank
    # the same guard over a stretch of lines (progress.py's tail): a rank on any line is seen
    from generator.matcher.parse import may_name_rank_in  # noqa: PLC0415

    filler = "2024-05-01 10:00:00 INFO step=4 loss=1.0\n" * 20
    for line in lines:
        if parse_rank(line) is not None:
            data = (filler + line + "\n" + filler).encode()
            assert may_name_rank_in(data, 0) and may_name_rank_in((line + "\n" + filler).encode(), 0), line
    assert not may_name_rank_in(filler.encode(), 0) and not may_name_rank_in(("x\n" + filler).encode(), 2)


def test_the_guards_before_costly_searches_never_skip_a_match() -> None:
    """parse_context skips the NCCL prefix search on a line without ' [', parse_time the ISO and
    glog searches without a clock time in the first 120 characters, the matcher the exit code
    and signal searches without their words: on every line of the fixture and dev logs and on
    random lines, a skipped search would have found nothing."""
    import random

    from generator.matcher import match, parse

    root = ROOT / "tests" / "fixtures"
    lines = [line for folder in ("logs/cases", "field/dev/cases") for path in sorted((root / folder).glob("*"))
             for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    rng = random.Random(7)
    alphabet = "0123456789:.- [ ]EIWFnode-1ank:=exitcodeSignal (SIGKILL)\u0663\u0664"
    lines += ["".join(rng.choice(alphabet) for _ in range(rng.randint(5, 150))) for _ in range(20000)]
    lines += [f"E{m:02d}{d:02d} {h:02d}:{mi:02d}:{s:02d}.{u} x" for m, d, h, mi, s, u in
              ((rng.randint(0, 12), rng.randint(0, 31), rng.randint(0, 23), 5, 6, rng.randint(0, 999999)) for _ in range(200))]
    assert len(lines) > 30000
    for line in lines:
        assert " [" in line or parse._NCCL_PREFIX.search(line) is None, line
        assert parse._CLOCK.search(line, 0, 120) or not (parse._ISO.search(line[:80]) or parse._GLOG.search(line[:120])), line
        assert "exitcode" in line or match._EXITCODE.search(line) is None, line
        assert "Signal " in line or match._SIGNAL.search(line) is None, line


def test_the_gpu_address_is_the_one_the_word_bounded_pattern_finds() -> None:
    """parse_gpu_address searches without the pattern's leading \\b (5x faster) and checks the
    word boundary itself: the same address as _GPU_ADDRESS.search on every fixture and dev line
    and on random lines made of what the pattern reads (letters, digits, underscores, non-ASCII
    letters and digits before 'GPU')."""
    import random

    from generator.matcher import parse

    root = ROOT / "tests" / "fixtures"
    lines = [line for folder in ("logs/cases", "field/dev/cases") for path in sorted((root / folder).glob("*"))
             for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    rng = random.Random(11)
    pieces = ["GPU", "GPU ", "GPU0000:03:00.0", "00000000:10:1C.0", "3b:00.0", "0000:", "a", "_", "1", "\u00e9", "\u0663",
              " ", ".", "-", "(", "xGPU 0000:3b:00.1", "_GPU0000:01:00.0", "\u00e9GPU 0000:3b:00.0"]
    lines += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(30000)]
    found = 0
    for line in lines:
        m = parse._GPU_ADDRESS.search(line)
        assert parse.parse_gpu_address(line) == (m.group(1).lower() if m else None), line
        found += m is not None
    assert found > 1000
