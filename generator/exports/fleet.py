"""Exports for the systems fleets already run: node-problem-detector and the Loki ruler.

Both are generated from the corpus on every build (into /data/, next to the other datasets)
so nobody copies a regex by hand:

- ``npd-gpu-monitor.json``: a node-problem-detector system-log-monitor configuration for the
  kernel log (kmsg plugin): one rule per Xid code, one per SXid severity, and one per
  kernel-side signature. What NVIDIA says needs no action is a temporary event; what needs
  the GPU reset (``RESET_GPU``) sets the condition ``GPUNeedsReset``, what needs the node
  restarted (``RESTART_BM``, ``RESTART_VM``) ``NodeNeedsReboot``, and what needs a person
  (``CONTACT_SUPPORT``, ``CHECK_MECHANICALS``, NVIDIA's workflows, a critical kernel-side
  failure) ``GPUNeedsAttention``. NPD matches a rule's pattern through the end of the message
  (it appends ``\\z``), so each exported pattern is the atlas's own, unanchored, then ``.*``.
- ``loki-gpu-rules.yaml``: Prometheus alerting rules for the Loki ruler, one per entry with
  signatures (and per Xid code), ``count_over_time`` of matching lines over five minutes, per
  host, on the kernel stream for kernel-side rules and on the job stream for the others;
  labels ``severity`` and ``atlas_entry``, the entry's page in the annotations.

Each signature is exported in the form rules.json carries (``behind_line_heads``): an anchored
one also reads a line behind a transport head and a process tag (``[rank3]: Killed`` in a pod's
stream), so ``kb diagnose``, the log doctor and the fleet rules agree on what a line is.

Both systems use RE2: every pattern is exported only if RE2 can run it (checked at build time
when the ``re2`` module is installed, and by the tests always).
"""

from __future__ import annotations

import json
import os
import re

from generator import __version__
from generator.corpus.validated import Corpus
from generator.exports.line_heads import behind_line_heads
from generator.exports.rules import compile_rules
from generator.corpus.model import Entry

LOKI_FORMAT = "kb.loki/1"
# where the annotations point: the site's address (mkdocs.yml's site_url default; KB_SITE_URL overrides both)
PUBLIC_SITE = "https://gpu-failure-atlas.github.io/gpu-failure-atlas/"


def site_address() -> str:
    url = os.environ.get("KB_SITE_URL") or PUBLIC_SITE
    return url if url.endswith("/") else url + "/"
KERNEL_STREAM = '{job=~"kernel|syslog|journal"}'
JOB_STREAM = '{job=~"training|jobs|pods"}'
# kernel-side: lines the kernel prints (what kmsg carries)
_KERNEL_MARKS = ("NVRM", "nvidia-nvswitch", "nvidia ", "pcieport", "EDAC", "mce:", "mlx5_core", "Hardware Error", "AER:",
                 "blocked for more than", "soft lockup", "Out of memory: Killed", "nvidia_uvm", "nvidia-modeset", "xid")
_KERNEL_CATEGORIES = ("xid", "hardware", "fabric")
CONDITIONS = (
    ("GPUNeedsReset", "GPUHasNoResetPending", "no GPU on this node needs a reset"),
    ("NodeNeedsReboot", "NodeHasNoRebootPending", "no GPU on this node needs the node rebooted"),
    ("GPUNeedsAttention", "GPUHasNoHardwareFault", "no GPU on this node reported a fault that needs a person"),
)
_ACTION_CONDITION = {"RESET_GPU": "GPUNeedsReset", "RESTART_BM": "NodeNeedsReboot", "RESTART_VM": "NodeNeedsReboot",
                     "CONTACT_SUPPORT": "GPUNeedsAttention", "CHECK_MECHANICALS": "GPUNeedsAttention"}


def _camel(entry_id: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", entry_id) if part)


def _condition(e: Entry) -> str | None:
    """The node condition an entry's failure sets, following NVIDIA's immediate action for Xid codes."""
    if e.xid:
        action = (e.xid.immediate_action or "").split(" ")[0]
        if action.startswith("WORKFLOW_"):
            return "GPUNeedsAttention"
        return _ACTION_CONDITION.get(action)
    return "GPUNeedsAttention" if e.severity == "critical" else None


def is_kernel_side(e: Entry, pattern: str) -> bool:
    return e.category in _KERNEL_CATEGORIES or any(mark in pattern for mark in _KERNEL_MARKS)


def npd_pattern(pattern: str) -> str:
    """An atlas pattern as NPD runs it: NPD anchors at the end of the message, the atlas searches anywhere."""
    body = pattern[4:] if pattern.startswith("(?i)") else pattern
    flags = "(?i)" if pattern.startswith("(?i)") else ""
    return f"{flags}(?:{body}).*"


def xid_pattern(code: int) -> str:
    return rf"NVRM: Xid \((?:PCI:)?[0-9a-fA-F:.]+\): {code}(?:,|\s*$)"


def _rules(corpus: Corpus) -> list[tuple[Entry, str, str, bool]]:
    """(entry, rule name, pattern, kernel side) for every exported rule."""
    out = []
    for e in corpus.entries:
        if e.xid:
            out.append((e, f"Xid{e.xid.code}", xid_pattern(e.xid.code), True))
    sxid = {"nvswitch-sxid-fatal": r"nvidia-nvswitch\d+: SXid \((?:PCI:)?[0-9a-fA-F:.]+\): \d+, Fatal",
            "nvswitch-sxid-nonfatal": r"nvidia-nvswitch\d+: SXid \((?:PCI:)?[0-9a-fA-F:.]+\): \d+, Non-fatal"}
    for eid, pattern in sxid.items():
        if eid in corpus.by_id:
            out.append((corpus.by_id[eid], _camel(eid), pattern, True))
    for e in corpus.entries:
        for sig in e.signatures:
            out.append((e, f"{_camel(e.id)}{_camel(sig.id)}", behind_line_heads(sig.pattern),
                        is_kernel_side(e, sig.pattern)))
    return out


def npd_config(corpus: Corpus, site_url: str) -> dict:
    rules = []
    for e, name, pattern, kernel in _rules(corpus):
        if not kernel:
            continue
        condition = _condition(e)
        rule = {"type": "permanent" if condition else "temporary", "reason": name[:128],
                "pattern": npd_pattern(pattern) if not name.startswith("Xid") else pattern + ".*"}
        if condition:
            rule["condition"] = condition
        rules.append(rule)
    return {
        "plugin": "kmsg",
        "logPath": "/dev/kmsg",
        "lookback": "5m",
        "bufferSize": 10,
        "source": "gpu-failure-atlas",
        "conditions": [{"type": t, "reason": r, "message": m} for t, r, m in CONDITIONS],
        "rules": rules,
    }


def _logql_regex(pattern: str) -> str:
    """A pattern as a LogQL string: backquoted (raw) unless it holds a backquote."""
    if "`" not in pattern:
        return f"`{pattern}`"
    return json.dumps(pattern)


def loki_rules(corpus: Corpus, site_url: str) -> dict:
    groups: dict[str, list] = {"kernel": [], "jobs": []}
    seen: set[str] = set()
    for e, name, pattern, kernel in _rules(corpus):
        alert = f"Gpu{name}"[:200]
        if alert in seen:
            continue
        seen.add(alert)
        stream = KERNEL_STREAM if kernel else JOB_STREAM
        severity = e.severity if e.severity != "info" else "info"
        groups["kernel" if kernel else "jobs"].append({
            "alert": alert,
            "expr": f"sum by (host) (count_over_time({stream} |~ {_logql_regex(pattern)} [5m])) > 0",
            "labels": {"severity": severity, "atlas_entry": e.id},
            "annotations": {"summary": e.title[:300], "description": " ".join(e.summary.split())[:500],
                            "atlas_url": f"{site_url}entries/{e.id}/"},
        })
    return {"groups": [{"name": f"gpu-failure-atlas-{key}", "interval": "1m", "rules": rules}
                       for key, rules in groups.items()]}


def files(corpus: Corpus, site_url: str, rules_hash: str | None = None) -> dict[str, str]:
    """The export files: name -> text. Each says the atlas version and corpus hash it comes from
    (``rules_hash``: the compiled rules' hash, when already at hand)."""
    rules_hash = rules_hash or compile_rules(corpus)["hash"]
    npd = npd_config(corpus, site_url)
    head = (f"# GPU Failure Atlas {__version__}: alerting rules for the Loki ruler ({LOKI_FORMAT}), corpus {rules_hash}.\n"
            f"# Adapt the stream selectors ({KERNEL_STREAM} for kernel logs, {JOB_STREAM} for job logs) to your labels.\n")
    loki = head + loki_yaml(loki_rules(corpus, site_url))
    return {"npd-gpu-monitor.json": json.dumps(npd, indent=1, ensure_ascii=False) + "\n", "loki-gpu-rules.yaml": loki}


YAML_WIDTH = 1000
# characters that PyYAML's emitter and libyaml's both write as they are (printable, no line break):
# libyaml escapes U+0085 and everything past U+FFFF, which PyYAML writes out; U+FEFF both escape
_BOTH_PRINTABLE = re.compile("[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]*")


def loki_yaml(doc: dict) -> str:
    """The Loki rules as ``yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)``
    writes them, byte for byte, in a tenth of the time where it can.

    PyYAML's emitter is pure Python (5 s of a 5,000-entry build); libyaml's (``CSafeDumper``)
    writes the same text for a string that holds only characters both write as they are (it
    escapes U+0085 and characters past U+FFFF, which PyYAML writes out) and, on the safe side,
    stays well short of the line width (the two fold long double-quoted lines at different
    spaces; none of the strings allowed here is double-quoted, but the bound costs nothing). A
    rule's lines do not depend on the rules around it, so each run of rules whose every string
    is such a string is written by libyaml, every other rule by PyYAML, and the texts are joined;
    a document of another shape, or one holding a list or mapping twice (PyYAML numbers its
    anchors across the document), is written by PyYAML whole (tests/test_fleet_exports.py
    compares the result with ``yaml.safe_dump`` on the corpus and on random rules)."""
    import yaml  # noqa: PLC0415 - the build has it; the matcher does not need it

    def dump(data: dict, fast: bool) -> str:
        dumper = getattr(yaml, "CSafeDumper", None) if fast else None
        if dumper:  # the tree SafeRepresenter would build, built here without its per-value dispatch
            return yaml.serialize(_node(yaml, data), Dumper=dumper, allow_unicode=True, width=YAML_WIDTH)
        return yaml.dump(data, Dumper=dumper or yaml.SafeDumper, sort_keys=False, allow_unicode=True, width=YAML_WIDTH)

    groups = doc.get("groups")
    if list(doc) != ["groups"] or not isinstance(groups, list) or not _plain_tree(doc, set()) or \
            not all(isinstance(g, dict) and list(g)[-1:] == ["rules"] and isinstance(g["rules"], list) for g in groups):
        return dump(doc, False)  # not the shape loki_rules builds (or a value met twice, an alias): no shortcut
    out = ["groups:\n"]
    for group in groups:
        head_fast = _emitters_agree({k: v for k, v in group.items() if k != "rules"})
        runs: list[tuple[bool, list]] = []  # consecutive rules written by the same emitter
        for rule in group["rules"]:
            fast = head_fast and _emitters_agree(rule)
            if runs and runs[-1][0] == fast:
                runs[-1][1].append(rule)
            else:
                runs.append((fast, [rule]))
        if not runs:  # 'rules: []' on the group's own line
            out.append(dump({"groups": [group]}, False).removeprefix("groups:\n"))
            continue
        for n, (fast, rules) in enumerate(runs):
            text = dump({"groups": [{**group, "rules": rules}]}, fast)
            head, sep, body = text.partition("\n  rules:\n")
            if not sep:
                return dump(doc, False)
            if n == 0:
                out.append(head.removeprefix("groups:\n") + sep)
            out.append(body)
    return "".join(out)


def _plain_tree(value: object, containers: set[int]) -> bool:
    """Whether ``value`` holds only strings, lists and dicts, none of them met twice (PyYAML would
    write one met twice with an anchor, numbered across the whole document)."""
    kind = type(value)
    if kind is str:
        return True
    if kind is not dict and kind is not list or id(value) in containers:
        return False
    containers.add(id(value))
    if kind is dict:
        return all(_plain_tree(k, containers) and _plain_tree(v, containers) for k, v in value.items())
    return all(_plain_tree(v, containers) for v in value)


def _node(yaml, value: object):  # noqa: ANN001, ANN202 - yaml is imported lazily
    """The node tree that ``yaml.dump(value, default_flow_style=False, sort_keys=False)``'s
    SafeRepresenter builds for a ``_plain_tree``."""
    if type(value) is str:
        return yaml.ScalarNode("tag:yaml.org,2002:str", value)
    if type(value) is dict:
        return yaml.MappingNode("tag:yaml.org,2002:map", [(_node(yaml, k), _node(yaml, v)) for k, v in value.items()],
                                flow_style=False)
    return yaml.SequenceNode("tag:yaml.org,2002:seq", [_node(yaml, v) for v in value], flow_style=False)


def _emitters_agree(value: object) -> bool:
    """Whether libyaml writes ``value`` (strings in lists and mappings) as PyYAML does: every
    string printable for both, on one line, and short enough that no line nears the width even
    with every quote doubled or escaped (a line starts at most 20 columns in)."""
    if isinstance(value, str):
        weight = len(value) + value.count("'") + value.count('"') + value.count("\\")
        return weight + 64 < YAML_WIDTH and _BOTH_PRINTABLE.fullmatch(value) is not None
    if isinstance(value, dict):
        return all(isinstance(k, str) and _emitters_agree(k) and _emitters_agree(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_emitters_agree(v) for v in value)
    return False
