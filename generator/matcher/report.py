"""The diagnosis report: one data structure, three renderings (JSON, text, Markdown).

The JSON form is the contract (``kb.diagnosis/2``, documented key by key on docs/diagnose.md);
the text form is for people at a
terminal; the Markdown form is for pasting into a chat or a pull request. All three are
built from the same ``report`` dictionary, so they cannot disagree.
"""

from __future__ import annotations

import datetime as _dt
import json
import re

from .progress import STOP_ENTRIES
from .rank import Finding, clock, main_clock, order_key, year_shift

SCHEMA = "kb.diagnosis/2"

# Characters a terminal or a Markdown viewer would act on rather than show: C0 controls but
# tab, DEL, C1 controls, and the bidirectional overrides that reorder what is displayed; and lone
# surrogates, which stand for the bytes of a file name that is not UTF-8 (Python's
# surrogateescape) and which no UTF-8 output can hold.
_INVISIBLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _written_out(char: str) -> str:
    """One invisible character as text: ``\\x1b``, ``\\u202e``; a name's undecodable byte as that byte, ``\\xff``."""
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character written out (``\\x1b``), so output cannot drive a
    terminal, and a file name's bytes that are not UTF-8 too (``bad\\xff.log``), so it is UTF-8."""
    return _INVISIBLE.sub(lambda m: _written_out(m.group(0)), text)


def code_span(text: str) -> str:
    """``text`` as one Markdown code span that no backtick inside it can close early."""
    text = visible(text)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_text(text: str) -> str:
    """Log-borne text (a host name, a recovery action) as inert Markdown: controls shown, markup escaped."""
    return re.sub(r"([\\`*_\[\]<>|~&])", r"\\\1", visible(text))


def _cut_note(cut: int) -> list[str]:
    """The note on stretches of over 64 KiB without a line break (``input.cut_lines``): one of the
    report's ``notes``, so every rendering (text, Markdown, the browser's page) says it in these words."""
    if not cut:
        return []
    return [f"{cut:,} stretch{'es' if cut != 1 else ''} of over 64 KiB without a line break: only the first and "
            "last 64 KiB of each were read"]


def _input_notes(stats, sources, explained: bool) -> list[str]:  # noqa: ANN001 - read.InputStats, job.Source objects
    """What the reader should know about the input itself: nothing in it (unless another note
    says why nothing could be read, a damaged archive), not text (read.looks_binary), or lines
    that end in CR alone (read.ChunkReader.feed)."""
    if not stats.bytes:
        return [] if explained else ["the input is empty (0 bytes): there was nothing to read"]
    notes = []
    if stats.binary:
        which, one = _which("binary", sources)
        notes.append(f"{which} {'looks' if one else 'look'} binary (control bytes or text that is not UTF-8 near the "
                     "start: a program, an image or a core dump, not a text log); it was read as text anyway, so a "
                     "finding or lead from it may mean little")
    if stats.cr_lines:
        which, one = _which("cr_lines", sources)
        notes.append(f"{which} {'ends its' if one else 'end their'} lines with CR alone, no LF (a serial console's "
                     "capture or a classic Mac tool): each CR was read as a line break, so line numbers count CRs "
                     "(as `tr '\\r' '\\n'` would show them)")
    return notes


def _which(flag: str, sources) -> tuple[str, bool]:  # noqa: ANN001 - job.Source objects
    """The inputs an input note is about (one by name, several counted, or "the input"), and
    whether that is one input."""
    named = [src.info.name for src in sources or () if getattr(src.stats, flag)]
    if len(named) == 1:
        return named[0], True
    if named:
        return f"{len(named):,} of the {len(sources):,} files", False
    return "the input", True


def clock_time(hit, shift: int) -> tuple[str, float] | None:  # noqa: ANN001 - match.Hit
    """The hit's time for display: year-less times placed in the job's year when it is known."""
    t = clock(hit, shift)
    if t and t[0].startswith("uptime/"):
        return ("uptime", t[1])
    return t


def time_text(time: tuple[str, float] | None) -> str | None:
    if not time:
        return None
    kind, value = time
    if kind == "uptime":
        return f"{value:.6f} s after boot"
    stamp = _dt.datetime.fromtimestamp(value, _dt.timezone.utc)
    if kind == "wall-noyear":
        return stamp.strftime("%b %d %H:%M:%S")
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def _where(f: Finding) -> dict:
    """Where the finding first happened: its first line, completed by what other lines tell.

    A torchelastic 'first observed failure' line names the failing worker better than the
    first line does; a GPU address beats the address of the PCIe port above it. When the
    first line names no rank or host (a bare traceback line), a later line of the same
    finding that does (the same error echoed by that rank's NCCL watchdog) fills it in.
    """
    h = f.first
    where = {}
    # the worker torchelastic names first, then the finding's lines in order (its first line leads)
    sources = ([f.first_failure] if f.first_failure else []) + f.hits
    rank = next((x.context.rank for x in sources if x.context.rank is not None), None)
    if rank is not None:
        where["rank"] = rank
    host = next((x.context.host for x in sources if x.context.host), None)
    if host:
        where["host"] = host
    # `pci` is always a GPU; an address known only from a PCIe port or another device's line
    # (an AER report on the root port above the GPU) is given as `device`
    gpu = f.gpu_pci or h.fields.get("gpu_pci")
    other = h.fields.get("pci") or h.context.pci
    if gpu:
        where["pci"] = gpu
    elif other:
        where["device"] = other
    t = time_text(h.context.time)
    if t:
        where["time"] = t
    return where


def _places(f: Finding) -> list[dict]:
    """Where the finding's lines came from, one item per host, rank and GPU, most lines first."""
    out = []
    for (host, rank, gpu), (count, first, last, _hit) in f.places.items():
        place = {k: v for k, v in (("host", host), ("rank", rank), ("pci", gpu)) if v is not None}
        out.append({**place, "count": count, "first_line": first, "last_line": last})
    out.sort(key=lambda p: (-p["count"], p["first_line"]))
    if f.other_places:
        out.append({"other": True, "count": f.other_places})
    return out


MAX_TIMELINE = 200


def _source_dicts(sources) -> list[dict]:  # noqa: ANN001 - job.Source objects
    out = []
    for src in sources:
        item = {"id": src.index, "name": src.info.name, "lines": src.stats.lines, "bytes": src.stats.bytes}
        if src.info.host:
            item["host"] = src.info.host
        if src.info.rank is not None:
            item["rank"] = src.info.rank
        out.append(item)
    return out


def _event(f: Finding, h, shift: int) -> dict:  # noqa: ANN001 - match.Hit
    ev = {"finding": f.id, "role": f.role, "source": h.source, "line": h.line}
    t = time_text(clock_time(h, shift))
    if t:
        ev["time"] = t
    if h.context.host:
        ev["host"] = h.context.host
    if h.context.rank is not None:
        ev["rank"] = h.context.rank
    gpu = h.fields.get("gpu_pci")
    if gpu:
        ev["pci"] = gpu
    return ev


def _timeline(findings: list[Finding]) -> tuple[list[dict], bool]:
    """Each finding's first line at each place, in time order where the clocks compare.

    Returns the events and whether some of them could only be ordered within their own input
    (no timestamp, or uptime without a known boot time)."""
    shift = year_shift(h for f in findings for h in f.hits)
    hits = []
    for f in findings:
        if f.role == "info":
            continue
        firsts = [p[3] for p in f.places.values()] or f.hits[:1]
        for h in firsts:
            hits.append((f, h))
    main = main_clock((h for _, h in hits), shift)
    in_order = order_key([h for _, h in hits], main, shift)
    hits.sort(key=lambda fh: in_order(fh[1]))
    relative = any(not (clock(h, shift) and clock(h, shift)[0] == main) for _, h in hits)
    return [_event(f, h, shift) for f, h in hits[:MAX_TIMELINE]], relative


def _nodes(timeline: list[dict]) -> list[dict]:
    """Per host, what it saw first (the first event of the timeline on that host)."""
    seen: dict[str, dict] = {}
    for ev in timeline:
        host = ev.get("host")
        if host and host not in seen:
            seen[host] = {"host": host, "first": ev["finding"], "source": ev["source"], "line": ev["line"],
                          **({"time": ev["time"]} if "time" in ev else {}), **({"rank": ev["rank"]} if "rank" in ev else {})}
    return list(seen.values())


def _artefact_culprit(artefacts: dict | None) -> dict | None:
    """Where a hang started by the debug artefacts: flight recorder, stall reports, then py-spy."""
    if not artefacts:
        return None
    fr = artefacts.get("flight_recorder")
    if fr:
        c = fr["culprits"][0]
        out = {"entry": "hang", "message": fr["message"]}
        if c["ranks"]:
            out["rank"] = c["ranks"][0]
        if c["sources"]:
            out["source"] = c["sources"][0]
        return out
    watchdogs = artefacts.get("watchdogs")
    if watchdogs and len(watchdogs["ranks"]) == 1:
        return {"entry": "hang", "message": watchdogs["message"], "rank": watchdogs["ranks"][0]}
    stalls = artefacts.get("stalls")
    if stalls:
        return {"entry": "hang", "message": stalls["message"], "rank": stalls["ranks"][0]}
    spy = artefacts.get("py_spy")
    if spy:
        o = spy["outliers"][0]
        out = {"entry": "hang", "message": spy["message"], "source": o["source"], "pid": o["pid"]}
        if o.get("host"):
            out["host"] = o["host"]
        return out
    return None


def build(findings: list[Finding], stats, site_url: str = "", sources=None, notes: list[str] | None = None,  # noqa: ANN001
          progress: dict | None = None, artefacts: dict | None = None, resembles: list[dict] | None = None,
          entries: dict | None = None) -> dict:
    """The report as plain data, in the ``kb.diagnosis/2`` shape (docs/diagnose.md lists every key)."""
    out = []
    for f in findings:
        fields = {}
        for h in f.hits:
            for k, v in h.fields.items():
                if k not in ("pci", "gpu_pci", "first_failure") and k not in fields:
                    fields[k] = v
        path = f.meta.get("path")
        item = {
            "id": f.id,
            "title": f.meta["title"],
            "severity": f.severity,
            "category": f.meta["category"],
            "owner": f.meta["owner"],
            "role": f.role,
            "wrapper": bool(f.meta.get("wrapper")),
            "heading": heading(f.role, bool(f.meta.get("wrapper"))),
            "score": f.score,
            "count": f.count,
            "source": f.first.source,
            "first_line": f.first.line,
            "last_line": f.last_line,
            "where": _where(f),
            "places": _places(f),
            "fields": fields,
            "evidence": [{"source": h.source, "line": h.line, "text": h.text} for h in f.hits],
            "url": (site_url + path) if path else None,
            "summary": f.meta.get("summary", ""),
            "fix": f.meta.get("fix", []),
        }
        if f.because_of:
            item["caused_by"] = f.because_of
        out.append(item)
    initiating = None
    failures = [f for f in findings if f.role != "info"]
    if failures:
        root = failures[0]
        initiating = {"entry": root.id, "source": root.first.source, "line": root.first.line, **_where(root)}
        if root.gpu_pci is None:
            # the root names a PCIe port or no device at all; a failure it caused may name the
            # GPU behind it (AER on a root port, then 'Unable to determine the device handle for GPU...')
            for other in failures[1:]:
                if root.id in other.because_of and other.gpu_pci:
                    initiating["pci"] = other.gpu_pci
                    break
        # the root's own lines may not say which worker it was; the launcher's report of the
        # first failing worker does (e.g. an OOM traceback, then 'failed (exitcode: 1) local_rank: 0')
        for other in failures[1:]:
            named = other.first_failure
            if named is None:
                continue
            if "rank" not in initiating and named.context.rank is not None:
                initiating["rank"] = named.context.rank
            if "host" not in initiating and named.context.host:
                initiating["host"] = named.context.host
            break
    hang = bool(progress and progress["hang"])
    verdict = _verdict(findings)
    if hang and progress:
        stalled = progress["behind"] or progress["stopped_first"]
        first = stalled[0] if stalled else None
        initiating = {"entry": "hang", "message": progress["message"]}
        if first:
            initiating.update({k: first[k] for k in ("source", "line", "rank", "host", "time") if k in first})
        verdict = f"hang: {progress['message']}"
    stops_only = all(f.id in STOP_ENTRIES for f in failures)
    culprit = _artefact_culprit(artefacts) if stops_only else None
    if culprit:  # the dumps name the rank or process that held the others up
        initiating = culprit
        verdict = f"hang: {culprit['message']}"
    recovery = [h.fields["recovery_action"] for f in findings for h in f.hits if h.fields.get("recovery_action")]
    timeline, relative = _timeline(findings)
    report = {
        "schema": SCHEMA,
        "input": {"lines": stats.lines, "bytes": stats.bytes, "files": len(sources) if sources else 1,
                  **({"cut_lines": stats.cut_lines} if stats.cut_lines else {})},
        "verdict": verdict,
        "initiating": initiating,
        "recovery_action": recovery[-1] if recovery else None,
        "sources": _source_dicts(sources) if sources else [{"id": 0, "name": "input", "lines": stats.lines,
                                                             "bytes": stats.bytes}],
        "timeline": timeline,
        "timeline_relative": relative,
        "nodes": _nodes(timeline),
        "progress": progress,
        "artefacts": artefacts,
        "notes": [*_cut_note(stats.cut_lines), *_input_notes(stats, sources, bool(notes)), *(notes or [])],
        "findings": out,
        "resembles": [_resemblance(r, (entries or {}).get(r["id"], {}), site_url) for r in resembles or []],
    }
    return report


def _resemblance(found: dict, meta: dict, site_url: str) -> dict:
    """A resemblance (resemble.Resembler.closest) with what the report shows of its entry."""
    path = meta.get("path")
    return {"id": found["id"], "title": meta.get("title", found["id"]), "severity": meta.get("severity", "unknown"),
            "category": meta.get("category", ""), "similarity": found["similarity"], "source": found["source"],
            "line": found["line"], "text": found["text"], "shared_words": found["shared_words"],
            "url": (site_url + path) if path else None}


def _verdict(findings: list[Finding]) -> str:
    failures = [f for f in findings if f.role != "info"]
    if not failures:
        return "no known failure found"
    root = failures[0]
    return f"{root.meta['title']}"


def to_json(report: dict, compact: bool = False) -> str:
    """The report as JSON, indented, or (``compact``) on one line for --format jsonl. It is UTF-8
    whatever the file names: a name's byte that is not UTF-8 is written out as ``visible`` does
    (the name ``bad\\xff.log`` as the JSON string "bad\\\\xff.log"), where it would make the
    whole output undecodable."""
    text = json.dumps(report, ensure_ascii=False, **({"separators": (",", ":")} if compact else {"indent": 2}))
    return _SURROGATE.sub(lambda m: "\\\\" + _written_out(m.group(0))[1:], text) + "\n"


def _where_text(where: dict) -> str:
    parts = []
    if "host" in where:
        parts.append(f"host {where['host']}")
    if "rank" in where:
        parts.append(f"rank {where['rank']}")
    if "pci" in where:
        parts.append(f"GPU {where['pci']}")
    if "device" in where:
        parts.append(f"PCI device {where['device']}")
    if "time" in where:
        parts.append(f"at {where['time']}")
    return ", ".join(parts)


def _source_name(report: dict, source: int | None) -> str | None:
    """A source's name for people, or None when the report has a single input."""
    sources = report.get("sources") or []
    if len(sources) <= 1 or source is None or not 0 <= source < len(sources):
        return None
    return sources[source]["name"]


def _at(report: dict, source: int | None, line: int) -> str:
    name = _source_name(report, source)
    return f"{name}:{line}" if name else f"line {line}"


def _first_text(report: dict) -> str:
    """Where the failure started (rank, host, GPU), as the report's `initiating` names it."""
    initiating = report.get("initiating") or {}
    where = _where_text({k: v for k, v in initiating.items() if k not in ("time", "message")})
    if "line" not in initiating:
        return where
    at = _at(report, initiating.get("source"), initiating["line"])
    if where:
        return f"{where} ({at})"
    return at if _source_name(report, initiating.get("source")) else ""


def _node_lines(report: dict) -> list[str]:
    """What each node saw first, when the report covers more than one host."""
    nodes = report.get("nodes") or []
    if len(nodes) < 2:
        return []
    titles = {f["id"]: f["title"] for f in report["findings"]}
    out = []
    for n in nodes:
        when = f" at {n['time']}" if n.get("time") else ""
        rank = f", rank {n['rank']}" if "rank" in n else ""
        out.append(f"{n['host']}{rank}: {titles.get(n['first'], n['first'])}{when} ({_at(report, n['source'], n['line'])})")
    return out


def _details_text(fields: dict) -> str:
    parts = []
    if "xid" in fields:
        parts.append(f"Xid {fields['xid']}")
    if "pid" in fields:
        parts.append(f"pid {fields['pid']}" + (f" ({fields['process']})" if fields.get("process") else ""))
    if "caused_by_xid" in fields:
        parts.append(f"driver says caused by Xid {fields['caused_by_xid']}")
    if "exitcode" in fields:
        parts.append(f"exit code {fields['exitcode']}" + (f" ({fields['signal']})" if fields.get("signal") else ""))
    if "nvlink" in fields:
        nv = fields["nvlink"]
        parts.append(f"NVLink {nv['unit']} {nv['severity']} on link {nv['link']}")
    if "sxid" in fields:
        parts.append(f"SXid {fields['sxid']} on NVSwitch {fields.get('switch')}")
    if "joined" in fields:
        parts.append(f"a line wrapped in two, read with line {fields['joined']} joined to it")
    return ", ".join(parts)


HEADINGS = {"root": "Root cause", "collateral": "Collateral", "info": "Note"}
# a wrapper entry first (a shell's "Segmentation fault", a launcher's "a worker failed", a build's
# "Error 2"): the log says that something failed, and no line of it names why
WRAPPER_ROOT_HEADING = "Failure, cause not recognised"


def heading(role: str, wrapper: bool) -> str:
    """A finding's heading, the one wording every report uses (the JSON's ``heading``, which the browser shows)."""
    return WRAPPER_ROOT_HEADING if role == "root" and wrapper else HEADINGS[role]


def role_label(finding: dict) -> str:
    """The heading of a finding (``build`` sets it) in capitals, as the text report prints it."""
    return finding["heading"].upper()


def to_text(report: dict, name: str = "input") -> str:
    lines = [f"{name}: {report['input']['lines']:,} lines, {report['input']['bytes']:,} bytes"]
    for extra in report.get("notes") or []:
        lines.append(f"Note: {extra}")
    findings = report["findings"]
    progress = report.get("progress") or {}
    if report["verdict"].startswith("hang: "):
        lines.append(f"HANG: {report['verdict'][6:]}")
    elif not any(f["role"] != "info" for f in findings):
        why = _nothing_failed(report)
        lines.append(f"No known failure found. {why[0].upper()}{why[1:]}")
    first = _first_text(report)
    if first:
        lines.append(f"FAILED FIRST: {first}")
    nodes = _node_lines(report)
    if nodes:
        lines.append("BY NODE (what each saw first):")
        lines.extend(f"  {n}" for n in nodes)
    if progress and not progress.get("hang"):
        lines.append(f"Progress: {progress['message']}")
    for kind, found in (report.get("artefacts") or {}).items():
        if not report["verdict"].endswith(found["message"]):
            lines.append(f"Also ({kind.replace('_', ' ')}): {found['message']}")
    if report.get("recovery_action"):
        lines.append(f"NVIDIA's recovery action for this GPU (Xid 154): {report['recovery_action']}")
    lines.extend(_resembles_text(report))
    titles = {f["id"]: f["title"] for f in findings}
    for f in findings:
        lines.append("")
        head = f"{role_label(f)}: {f['title']}  [{f['severity']}, owner: {f['owner']}]"
        lines.append(head)
        if f.get("caused_by"):
            lines.append("  likely caused by: " + "; ".join(titles.get(c, c) for c in f["caused_by"]))
        where = _where_text(f["where"])
        if where:
            lines.append(f"  where: {where}")
        details = _details_text(f["fields"])
        if details:
            lines.append(f"  details: {details}")
        lines.append(f"  seen {f['count']} time{'s' if f['count'] != 1 else ''}, first on "
                     f"{_at(report, f.get('source'), f['first_line'])}:")
        width = max(len(_at(report, e.get("source"), e["line"]) if _source_name(report, e.get("source")) else str(e["line"]))
                    for e in f["evidence"])
        for e in f["evidence"]:
            at = _at(report, e.get("source"), e["line"]) if _source_name(report, e.get("source")) else str(e["line"])
            lines.append(f"    {at:>{width}} | {e['text']}")
        if f["role"] == "root" and f["fix"]:
            lines.append("  first steps:")
            for i, step in enumerate(f["fix"], 1):
                rung = f"[{step['rung'].replace('-', ' ')}] " if step.get("rung") else ""
                lines.append(f"    {i}. {rung}{' '.join(step['text'].split())}")
                if step.get("command"):
                    for cmd in step["command"].splitlines():
                        lines.append(f"       $ {cmd}")
        if f["url"]:
            lines.append(f"  more: {f['url']}")
    return "\n".join(visible(line) for line in lines) + "\n"


def _nothing_failed(report: dict) -> str:
    """Why a report without failures says so: only notes matched, only leads, or nothing."""
    if report["findings"]:
        return "the log matched only notes (messages that do not stop a job), below."
    return "no signature matched." if report.get("resembles") else "the log matched nothing in the atlas."


RESEMBLES_HEAD = ("These lines read like failures the atlas knows "
                  "(closest wording; a lead to check, not a diagnosis):")
# leads beside failures: those are wrappers (a worker failed, a process crashed), naming no cause
RESEMBLES_BESIDE = "The failures found only say that a process stopped; " + RESEMBLES_HEAD[0].lower() + RESEMBLES_HEAD[1:]


def _resembles_text(report: dict) -> list[str]:
    found = report.get("resembles") or []
    if not found:
        return []
    beside = any(f["role"] != "info" for f in report["findings"])
    lines = [RESEMBLES_BESIDE if beside else RESEMBLES_HEAD]
    for r in found:
        lines.append(f"  RESEMBLES: {r['title']}  [{r['severity']}, similarity {r['similarity']:.2f}]")
        lines.append(f"    {_at(report, r.get('source'), r['line'])} | {r['text']}")
        lines.append(f"    shared words: {', '.join(r['shared_words'])}")
        if r["url"]:
            lines.append(f"    more: {r['url']}")
    return lines


def _resembles_markdown(report: dict) -> list[str]:
    out = []
    for r in report["resembles"]:
        title = f"[{r['title']}]({r['url']})" if r["url"] else r["title"]
        out.append(f"- {title} (similarity {r['similarity']:.2f}), "
                   f"{md_text(_at(report, r.get('source'), r['line']))}: {code_span(r['text'])}")
    return out


def to_markdown(report: dict, name: str = "input") -> str:
    out = [f"### Diagnosis of {code_span(name)}", ""]
    for extra in report.get("notes") or []:
        out.extend([f"*Note: {md_text(extra)}*", ""])
    findings = report["findings"]
    failures = [f for f in findings if f["role"] != "info"]
    hang = report["verdict"].startswith("hang: ")
    if hang:
        out.extend([f"**Hang:** {md_text(report['verdict'][6:])}", ""])
    if not failures and not hang:
        out.append(f"No known failure found: {_nothing_failed(report)}")
        if report.get("resembles"):
            out.extend(["", md_text(RESEMBLES_HEAD), ""])
            out.extend(_resembles_markdown(report))
    else:
        root = failures[0]
        link = f"[{root['title']}]({root['url']})" if root["url"] else root["title"]
        where = md_text(_where_text(root["where"]))
        out.append(f"**{root['heading']}:** {link} ({root['severity']})" + (f", {where}" if where else ""))
        first = _first_text(report)
        if first:
            out.append("")
            out.append(f"**Failed first:** {md_text(first)}")
        if report.get("resembles"):  # the failures found only say that something stopped
            out.extend(["", md_text(RESEMBLES_BESIDE), ""])
            out.extend(_resembles_markdown(report))
    nodes = _node_lines(report)
    if nodes:
        out.extend(["", "**By node** (what each saw first):", ""])
        out.extend(f"- {md_text(n)}" for n in nodes)
    if report.get("recovery_action"):
        out.append("")
        out.append(f"NVIDIA's recovery action for this GPU (Xid 154): **{md_text(report['recovery_action'])}**")
    titles = {f["id"]: f["title"] for f in findings}
    for f in findings:
        out.append("")
        title = f"[{f['title']}]({f['url']})" if f["url"] else f["title"]
        out.append(f"#### {f['heading']}: {title}")
        out.append("")
        meta = [f"severity **{f['severity']}**", f"seen {f['count']}×",
                f"first on {md_text(_at(report, f.get('source'), f['first_line']))}"]
        if f.get("caused_by"):
            meta.append("likely caused by " + ", ".join(titles.get(c, c) for c in f["caused_by"]))
        where = _where_text(f["where"])
        if where:
            meta.append(md_text(where))
        out.append("; ".join(meta))
        out.append("")
        longest = max((len(run) for e in f["evidence"] for run in re.findall("`+", e["text"])), default=0)
        fence = "`" * max(3, longest + 1)
        out.append(fence + "text")
        for e in f["evidence"]:
            out.append(f"{visible(_at(report, e.get('source'), e['line']).removeprefix('line '))}: {visible(e['text'])}")
        out.append(fence)
        if f["role"] == "root" and f["fix"]:
            out.append("")
            out.append("First steps:")
            out.append("")
            for i, step in enumerate(f["fix"], 1):
                cmd = f" `{step['command']}`" if step.get("command") and "`" not in step["command"] and "\n" not in step["command"] else ""
                out.append(f"{i}. {' '.join(step['text'].split())}{cmd}")
    out.append("")
    out.append(f"<sub>{report['input']['lines']:,} lines analysed locally by GPU Failure Atlas.</sub>")
    return "\n".join(out) + "\n"
