"""Parse what real log lines carry: timestamps, rank and host prefixes, Xid and SXid events.

Only lines that matched something are parsed, so clarity matters more than speed here.

Timestamps become ``(kind, seconds)``: ``uptime`` (dmesg ``[ 123.456]`` and /dev/kmsg),
``wall`` (ISO-8601, ``dmesg -T``, Slurm, ``journalctl -o json``) and ``wall-noyear`` (syslog/journald and glog,
which print no year). Only times of the same kind are compared.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

MONTHS = {m: i for i, m in enumerate(calendar.month_abbr) if m}

_DMESG = re.compile(r"^\[\s*(\d+\.\d+)\]")
_KMSG = re.compile(r"^\d+,\d+,(\d+),[^;]*;")
_DMESG_T = re.compile(r"^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\]")
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?")
# syslog and journald: month, day, time, the host (journalctl prints none for some exports and
# pastes drop it: `Apr 08 09:31:09 kernel: ...`, so a word ending in ':' is the program, not a host)
_SYSLOG = re.compile(r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.\d+)? (?:(\S+(?<!:)) )?(?=\S+(?:\[\d+\])?: )")
# journalctl -o json: one object per line; the time is microseconds since the epoch
_JOURNAL_TIME = re.compile(r'"__REALTIME_TIMESTAMP"\s*:\s*"(\d{10,19})"')
_JOURNAL_HOST = re.compile(r'"_HOSTNAME"\s*:\s*"([\w.\-]{1,253})"')
_GLOG = re.compile(r"(?:^|[\s\[])[IWEF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9})\b")  # E0810 / c10's E321
# what _ISO and _GLOG both need (searched first: they try every position of a line without one)
_CLOCK = re.compile(r"\d\d:\d\d:\d\d")

_RANK_PATTERNS = (
    re.compile(r"\[[Rr]ank ?(\d{1,6})\]"),          # [rank3]: ... and [Rank 3] inside messages
    re.compile(r"^\[default(\d{1,6})\]:"),          # torchrun --tee / --log-dir prefixes
    # torchrun's "3: " local-rank prefix; not TensorRT's logger, which starts an error with its
    # ErrorCode the same way ("6: The engine plan file ...", "3: [file.cpp::fn::123] Error Code 3: ...")
    re.compile(r"^(?!\d{1,2}: (?:\[[^\]\s]{1,200}\.(?:cpp|cu|h)::|The engine plan file ))(\d{1,6}): "),
    re.compile(r"\brank\s*:\s*(\d{1,6})\b"),        # elastic Root Cause block
    re.compile(r"\blocal_rank:\s*(\d{1,6})\b"),       # elastic agent: failed (exitcode: -9) local_rank: 3
    re.compile(r"\btask (\d{1,6}):"),               # srun: error: node: task 3: ...
    re.compile(r"\bglobal_rank[=:]\s*(\d{1,6})"),
    re.compile(r"^\(\w{1,40} rank=(\d{1,6}) pid=\d+"),  # vLLM's worker prefix: (VllmWorker rank=5 pid=3073)
    re.compile(r"\[\d{1,6},(\d{1,6})\]<std(?:out|err)>:"),  # mpirun --tag-output: [1,12]<stdout>:
)
_NCCL_PREFIX = re.compile(r"(?:^|[\s>:])([A-Za-z0-9][\w.\-]*):(\d+):(\d+) \[(\d+)\]")  # after mpirun's <stdout>: too
_SRUN_HOST = re.compile(r"srun: error: ([\w.\-]+): task")
_RAY_IP = re.compile(r"^\(\w{1,60} pid=\d+, ip=(\d{1,3}(?:\.\d{1,3}){3})\)")  # (RayWorkerWrapper pid=1054, ip=10.96.62.52)
_HOST_FIELD = re.compile(r"^\s*host\s*:\s*([\w.\-]+)")
_PCI = re.compile(r"\b(?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?\b")  # domain required: not a time
_FALLEN_GPU = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})")

# A line holds one of these texts if parse_xid or parse_sxid can read an event from it (the driver's
# 'Xid' and 'SXid', monitoring tools' 'XID 79' and 'xid 79', exporters' *_XID_ERRORS metrics). The
# matcher looks for them before it parses a line, and the rules list them as anchors.
XID_TEXTS = ("Xid", "XID ", "xid ", "XID_ERRORS", "xid_errors")

# NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F:.]{5,16})\): (\d{1,4})(?:,|\s*$|\s*\")"  # a cut or quoted line may end at the code
    r"(?: pid='?(<unknown>|\d+)'?,)?(?: name=([^,]{1,64}),)?\s?(.{0,400})"
)
_CAUSED_BY = re.compile(r"caused by previous Xid (\d{1,4})")
_RECOVERY = re.compile(r"GPU recovery action changed from (0x[0-9a-fA-F]+) \(([^)]*)\) to (0x[0-9a-fA-F]+) \(([^)]*)\)")
_NVLINK5 = re.compile(r"^([A-Z][A-Z0-9_]*(?:/[A-Z_]+)?)\s+(Nonfatal|Fatal)\s+(XC[01])\s+(i\d+)\s+Link\s+(-?\d+)\s+\((0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)")
_SXID = re.compile(r"nvidia-nvswitch(\d+): SXid \((?:PCI:)?([0-9a-fA-F:.]+)\): (\d{1,6}), (?:(Fatal|Non-fatal), )?(.{0,300})")


@dataclass
class Context:
    """Where a line came from, as far as its own text tells."""

    time: tuple[str, float] | None = None
    rank: int | None = None
    host: str | None = None
    pci: str | None = None


def parse_time(line: str) -> tuple[str, float] | None:
    line = line.lstrip(" \t")  # a log pasted as a Markdown code block is indented
    if line.startswith("{") and "__REALTIME_TIMESTAMP" in line:
        m = _JOURNAL_TIME.search(line)
        if m:
            return ("wall", int(m.group(1)) / 1e6)
    m = _DMESG.match(line)
    if m:
        return ("uptime", float(m.group(1)))
    m = _KMSG.match(line)
    if m:
        return ("uptime", int(m.group(1)) / 1e6)
    m = _DMESG_T.match(line)
    if m:
        mon, day, hh, mm, ss, year = m.groups()
        return ("wall", float(calendar.timegm((int(year), MONTHS.get(mon, 1), int(day), int(hh), int(mm), int(ss)))))
    m = _SYSLOG.match(line)
    if m:
        mon, day, hh, mm, ss, _host = m.groups()
        return ("wall-noyear", _noyear(MONTHS.get(mon, 1), int(day), int(hh), int(mm), int(ss)))
    if _CLOCK.search(line, 0, 120) is None:  # what is left (ISO 8601, glog) shows a clock time in its reach
        return None
    m = _ISO.search(line[:80])
    if m:
        y, mo, d, hh, mm, ss, frac, tz = m.groups()
        seconds = calendar.timegm((int(y), int(mo), int(d), int(hh), int(mm), int(ss)))
        if frac:
            seconds += float("0." + frac)
        if tz and tz != "Z":
            sign = 1 if tz[0] == "+" else -1
            tz = tz[1:].replace(":", "")
            seconds -= sign * (int(tz[:2]) * 3600 + int(tz[2:]) * 60)
        return ("wall", float(seconds))
    m = _GLOG.search(line[:120])
    if m:
        mo, d, hh, mm, ss, frac = m.groups()
        return ("wall-noyear", _noyear(int(mo), int(d), int(hh), int(mm), int(ss)) + float("0." + frac))
    return None


_UPTIME_INSIDE = re.compile(r"\bkernel: \[\s*(\d+\.\d+)\]")


def parse_boot(line: str) -> tuple[str, float] | None:
    """The boot time a line reveals when it carries both a clock time and the kernel's uptime
    (kern.log: ``Nov  5 01:15:00 node1 kernel: [ 1234.5] ...``), as ``(clock kind, seconds)``."""
    m = _UPTIME_INSIDE.search(line)
    if not m:
        return None
    t = parse_time(line)
    if not t or t[0] == "uptime":
        return None
    return (t[0], t[1] - float(m.group(1)))


def _noyear(month: int, day: int, hh: int, mm: int, ss: int) -> float:
    month = min(max(month, 1), 12)
    day = min(max(day, 1), 28 if month == 2 else 30)
    return float(calendar.timegm((2000, month, day, hh, mm, ss)))


# the text each rank pattern needs, checked with `in` first (a line without it is not searched);
# None: the pattern needs a digit at the line's start instead
_RANK_GUARDS = ("ank", "[default", None, "ank", "ank", "task ", "ank", "ank", "<std")
assert len(_RANK_GUARDS) == len(_RANK_PATTERNS)


# what the guard-less pattern needs: digits (any script's: up to 4 bytes each) and ": " at a line's start
_DIGITS_COLON = rb"[0-9\x80-\xff]{1,24}: "
_RANK_GUARD_TEXTS = tuple(g.encode() for g in dict.fromkeys(_RANK_GUARDS) if g is not None)
_MAY_NAME_RANK = re.compile(b"^" + _DIGITS_COLON + b"|" + b"|".join(map(re.escape, _RANK_GUARD_TEXTS)))
_STARTS_WITH_DIGITS = re.compile(_DIGITS_COLON)
_LATER_LINE_STARTS_WITH_DIGITS = re.compile(b"\n" + _DIGITS_COLON)


def may_name_rank_in(data: bytes, start: int) -> bool:
    """False when no line of ``data`` from ``start`` (a line start) on can name a rank: none
    of the guards is there and no line starts with digits and ": " (a few scans in C)."""
    return (any(data.find(g, start) >= 0 for g in _RANK_GUARD_TEXTS) or _STARTS_WITH_DIGITS.match(data, start) is not None
            or _LATER_LINE_STARTS_WITH_DIGITS.search(data, start) is not None)


def may_name_rank(raw: bytes) -> bool:
    """False when ``parse_rank`` is sure to find no rank in this line (as bytes): none of the
    guards is in it and it does not start with digits and ": " (one search in C)."""
    return _MAY_NAME_RANK.search(raw) is not None


def parse_rank(line: str) -> int | None:
    """The rank a line's prefix or text names, if any (the rank part of parse_context)."""
    for guard, rx in zip(_RANK_GUARDS, _RANK_PATTERNS):
        if guard is None:
            if not line[:1].isdigit():
                continue
        elif guard not in line:
            continue
        m = rx.search(line)
        if m:
            return int(m.group(1))
    return None


def parse_context(line: str) -> Context:
    ctx = Context(time=parse_time(line), rank=parse_rank(line))
    m = _SYSLOG.match(line)
    if m:
        ctx.host = m.group(6)
    m = _NCCL_PREFIX.search(line) if " [" in line else None  # it tries every position: only where it can match
    if m and not ctx.host:
        ctx.host = m.group(1)
    m = _SRUN_HOST.search(line) or _HOST_FIELD.search(line)
    if m:
        ctx.host = m.group(1)
    if not ctx.host and line.startswith("("):
        m = _RAY_IP.match(line)
        if m:
            ctx.host = m.group(1)  # a Ray worker's node, by its address
    if line.startswith("{") and "_HOSTNAME" in line:
        m = _JOURNAL_HOST.search(line)
        if m:
            ctx.host = m.group(1)
    return ctx


@dataclass
class XidEvent:
    code: int
    pci: str
    pid: int | None
    process: str | None
    text: str
    caused_by: int | None = None
    recovery_action: str | None = None
    nvlink: dict | None = None
    device: str | None = None  # a GPU UUID, when the reporter names the GPU that way


# GPUd's own reports of an Xid it found (components/accelerator/nvidia/xid/health_state.go over its
# releases): a component state's reason, 'XID 79 detected on PCI:0000:9b:00' (early 2025),
# 'XID 123(SPI PMU RPC Write Failure) detected on PCI:0000:9b:00', 'XID 79 (GPU has fallen off the
# bus) detected on PCI:0000:04:00', and from late 2025 the catalog's mnemonic and description,
# 'XID 79 ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS GPU has fallen off the bus detected on GPU
# PCI:0000:ae:00 UUID:GPU-...', an NVLink code with its sub-code, 'XID 149.37 (err status 0x00000000)
# NVLINK_NETIR_ERROR detected on GPU PCI:0000:00:00'; an event message, 'xid 119 detected by dmesg'.
# 'SXID 12028 ...' (an NVSwitch's) is not an Xid: the word must start at 'XID'. GPUd puts only its
# catalog's mnemonic or description between the code and 'detected' (both start with a capital; an
# empty description leaves a second space), so a sentence such as 'XID 79 was not detected on PCI:..'
# is not read as an event.
_XID_GPUD = re.compile(r"\b[Xx][Ii][Dd] (\d{1,4})(?:\.\d{1,3})?(?: ?\([^)]{1,120}\))?(?: (?:[A-Z][^\n]{0,199}?)?)?"
                       r" detected (?:on (?:GPU )?PCI:([0-9a-fA-F:.]{7,16})|by (?:dmesg|kmsg))")
# The Kubernetes device plugin's report of an NVML Xid event (internal/rm/health.go):
# 'XidCriticalError: Xid=79 on Device=GPU-...; marking device as unhealthy.' and, in older
# releases, 'XidCriticalError: Xid=48, All devices will go unhealthy.'
_XID_DEVICE_PLUGIN = re.compile(r"XidCriticalError: Xid=(\d{1,4})(?: on Device=(GPU-[0-9a-fA-F-]{4,64}|MIG-[0-9a-fA-F-]{4,64}))?")


# DCGM's health watch (DCGM_FR_XID_ERROR_MSG in dcgmlib/dcgm_errors.h): 'Detected XID 31 for GPU 4',
# often inside a node condition that also names the GPU's PCI address and UUID
_XID_DCGM = re.compile(r"Detected XID (\d{1,4}) for GPU \d{1,3}\b")
# A Prometheus sample of an exporter's Xid metric: dcgm-exporter's DCGM_FI_DEV_XID_ERRORS (its value is the
# last Xid code; an err_code label repeats it since dcgm-exporter PR #309), DCGM_FI_DEV_XID_ERRORS_ACTIVE and
# DCGM_EXP_XID_ERRORS_COUNT (an xid label, the value counts events), GPUd's accelerator_nvidia_xid_errors_total.
_XID_METRIC = re.compile(r"\b(DCGM_FI_DEV_XID_ERRORS|DCGM_FI_DEV_XID_ERRORS_ACTIVE|DCGM_EXP_XID_ERRORS_COUNT"
                         r"|accelerator_nvidia_xid_errors_total)\{([^{}\n]{0,1200})\}(?:[ \t]+(\d{1,12}(?:\.0*)?)\b)?")
_METRIC_XID_LABEL = re.compile(r"\b(?:err_code|xid)=\"(\d{1,4})\"")
_GPU_UUID = re.compile(r"\b(GPU-[0-9a-fA-F]{8}-[0-9a-fA-F-]{4,40})")


def _metric_xid(m: re.Match) -> XidEvent | None:
    """The Xid an exporter's metric sample names, or None for a sample that says there is none
    (a value of 0: no Xid yet, or no event in the window)."""
    name, labels, value = m.groups()
    label = _METRIC_XID_LABEL.search(labels)
    number = int(float(value)) if value else None
    if number == 0:
        return None
    if label:
        code = int(label.group(1))
    elif name == "DCGM_FI_DEV_XID_ERRORS" and number:
        code = number  # the sample's value is the last Xid code
    else:
        return None
    if not 0 < code < 10000:
        return None
    uuid = _GPU_UUID.search(labels)
    return XidEvent(code=code, pci="", pid=None, process=None, text=m.group(0), device=uuid.group(1) if uuid else None)


def parse_xid(line: str) -> XidEvent | None:
    """The Xid event on this line, in any of the driver's formats or as the Kubernetes device
    plugin, GPUd or DCGM reports it; None if there is none."""
    m = _XID.search(line)
    if not m:
        dcgm = _XID_DCGM.search(line) if "Detected XID" in line else None
        if dcgm:
            pci = _PCI.search(line)
            uuid = _GPU_UUID.search(line)
            return XidEvent(code=int(dcgm.group(1)), pci=pci.group(1).lower() if pci else "", pid=None, process=None,
                            text=dcgm.group(0), device=uuid.group(1) if uuid else None)
        plugin = _XID_DEVICE_PLUGIN.search(line) if "XidCriticalError" in line else None
        if plugin:
            return XidEvent(code=int(plugin.group(1)), pci="", pid=None, process=None, text=line[plugin.end():].strip(" ;,."),
                            device=plugin.group(2))
        gpud = _XID_GPUD.search(line) if "detected" in line else None
        if gpud:
            pci = (gpud.group(2) or "").lower().rstrip(".:")
            return XidEvent(code=int(gpud.group(1)), pci=pci, pid=None, process=None, text=gpud.group(0))
        metric = _XID_METRIC.search(line) if ("XID_ERRORS" in line or "xid_errors" in line) else None
        return _metric_xid(metric) if metric else None
    pci, code, pid, name, rest = m.groups()
    event = XidEvent(
        code=int(code),
        pci=pci.lower().rstrip(".:"),
        pid=int(pid) if pid and pid.isdigit() else None,
        process=None if not name or name.strip("'") == "<unknown>" else name.strip(),
        text=rest.strip(),
    )
    caused = _CAUSED_BY.search(rest)
    if caused:
        event.caused_by = int(caused.group(1))
    recovery = _RECOVERY.search(rest)
    if recovery:
        event.recovery_action = recovery.group(4)
    if 144 <= event.code <= 150:
        nv = _NVLINK5.match(event.text)
        if nv:
            unit, severity, xc, inst, link, intr, status = nv.groups()
            event.nvlink = {"unit": unit, "severity": severity, "link": int(link), "intr_info": intr, "error_status": status}
    return event


@dataclass
class SxidEvent:
    switch: int
    pci: str
    code: int
    fatal: bool | None
    text: str


def parse_sxid(line: str) -> SxidEvent | None:
    m = _SXID.search(line)
    if not m:
        return None
    switch, pci, code, severity, rest = m.groups()
    fatal = None if severity is None else severity == "Fatal"
    return SxidEvent(int(switch), pci.lower(), int(code), fatal, rest.strip())


def parse_fallen_gpu(line: str) -> str | None:
    """The GPU named on the first line of the three-line 'fallen off the bus' message."""
    m = _FALLEN_GPU.search(line)
    return m.group(1).lower() if m else None


# `nvidia-smi -q` names each GPU on a line of its own ("GPU 00000000:10:1C.0") above its
# indented report; a finding inside that report belongs to the last GPU named before it
_SMI_GPU = re.compile(r"(?m)^GPU [0-9A-Fa-f]{4}([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})\.[0-7]\s*$")
SMI_LOOKBACK = 32768  # bytes searched above a hit; a full `nvidia-smi -q` GPU report is about 10 KiB


def parse_smi_gpu(text: str) -> str | None:
    """The GPU whose `nvidia-smi -q` report ``text`` ends inside (the last GPU header in it)."""
    found = None
    for found in _SMI_GPU.finditer(text):
        pass
    return found.group(1).lower() if found else None


# NVML and nvidia-smi name a GPU by its full bus id, glued to the word: "GPU0000:03:00.0",
# "GPU 00000000:10:1C.0" (an 8-digit domain); the matcher keeps the usual 4-digit form
_GPU_ADDRESS = re.compile(r"\bGPU ?(?:[0-9A-Fa-f]{4})?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})\.[0-7]\b")
# the same without the leading \b, which keeps the regex engine from skipping ahead to 'GPU' (5x slower)
_GPU_ADDRESS_AFTER_WORD = re.compile(_GPU_ADDRESS.pattern[2:])


def parse_gpu_address(line: str) -> str | None:
    """The GPU a tool's message names by bus id ('Unable to determine the device handle for GPU0000:03:00.0'):
    _GPU_ADDRESS's first match, found as the first match of the pattern without its \b that starts
    a word (what \b asks before the word character 'G')."""
    m = _GPU_ADDRESS_AFTER_WORD.search(line)
    while m is not None:
        at = m.start()
        if at == 0 or not (line[at - 1].isalnum() or line[at - 1] == "_"):
            return m.group(1).lower()
        m = _GPU_ADDRESS_AFTER_WORD.search(line, at + 1)
    return None


def parse_pci(line: str) -> str | None:
    m = _PCI.search(line)
    return m.group(1).lower() if m else None
