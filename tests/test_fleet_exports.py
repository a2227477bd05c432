"""node-problem-detector and Loki ruler exports: RE2 patterns that match each signature's own lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from generator.exports import fleet as fx
from generator.corpus.validated import load_corpus

re2 = pytest.importorskip("re2")  # google-re2, a dev dependency: the syntax NPD and Loki both use

CORPUS = load_corpus(ROOT / "kb" / "entries")
FILES = fx.files(CORPUS, fx.site_address())
NPD = json.loads(FILES["npd-gpu-monitor.json"])
LOKI = yaml.safe_load(FILES["loki-gpu-rules.yaml"])
# the fields node-problem-detector reads (pkg/systemlogmonitor/config.go and types/types.go)
NPD_TOP = {"plugin", "logPath", "lookback", "bufferSize", "source", "conditions", "rules"}


def _npd_matches(pattern: str, message: str) -> bool:
    """As NPD runs a rule: the pattern with \\z appended, searched in the message (RE2)."""
    return re2.search(pattern + r"\z", message) is not None


def test_the_npd_config_has_the_shape_npd_reads() -> None:
    assert set(NPD) == NPD_TOP and NPD["plugin"] == "kmsg"
    declared = {c["type"] for c in NPD["conditions"]}
    assert declared == {"GPUNeedsReset", "NodeNeedsReboot", "GPUNeedsAttention"}
    assert all(set(c) == {"type", "reason", "message"} for c in NPD["conditions"])
    for rule in NPD["rules"]:
        assert rule["type"] in ("temporary", "permanent")
        assert set(rule) == ({"type", "reason", "pattern", "condition"} if rule["type"] == "permanent" else {"type", "reason", "pattern"})
        if rule["type"] == "permanent":
            assert rule["condition"] in declared
        re2.compile(rule["pattern"] + r"\z")
    reasons = [r["reason"] for r in NPD["rules"]]
    assert len(reasons) == len(set(reasons))


def test_every_xid_code_has_a_rule_following_nvidias_action() -> None:
    by_reason = {r["reason"]: r for r in NPD["rules"]}
    for e in CORPUS.xid_entries():
        rule = by_reason[f"Xid{e.xid.code}"]
        action = (e.xid.immediate_action or "").split(" ")[0]
        if action == "RESET_GPU":
            assert rule.get("condition") == "GPUNeedsReset", e.id
        elif action in ("RESTART_BM", "RESTART_VM"):
            assert rule.get("condition") == "NodeNeedsReboot", e.id
        elif action in ("IGNORE", "RESTART_APP"):
            assert rule["type"] == "temporary", e.id


def test_xid_rules_match_real_xid_lines_by_their_code_only() -> None:
    lines = [line for p in (ROOT / "tests" / "fixtures" / "logs" / "cases").glob("*.log")
             for line in p.read_text(errors="replace").splitlines() if "NVRM: Xid (" in line]
    assert len(lines) > 50
    rules = {int(r["reason"][3:]): r["pattern"] for r in NPD["rules"] if re.fullmatch(r"Xid\d+", r["reason"])}
    for line in lines[:400]:
        message = re.sub(r"^.*?(NVRM: Xid)", r"\1", line)  # kmsg carries the message without its prefix
        code = int(re.search(r"NVRM: Xid \([^)]*\): (\d+)", message).group(1))
        if code not in rules:
            continue
        assert _npd_matches(rules[code], message), message
        other = next(c for c in rules if c != code)
        assert not _npd_matches(rules[other], message)


def test_exported_signatures_match_their_examples_and_not_their_counter_examples() -> None:
    npd = {r["reason"]: r["pattern"] for r in NPD["rules"]}
    loki = {r["alert"]: r["expr"] for g in LOKI["groups"] for r in g["rules"]}
    checked = 0
    for e in CORPUS.entries:
        for sig in e.signatures:
            name = f"{fx._camel(e.id)}{fx._camel(sig.id)}"
            expr = loki[f"Gpu{name}"]
            regex = expr.split("|~ ", 1)[1].rsplit(" [5m]", 1)[0]
            regex = regex[1:-1] if regex.startswith("`") else json.loads(regex)
            for ex in sig.examples:
                assert re2.search(regex, ex.line), (e.id, sig.id, ex.line[:80])
                if name in npd:
                    assert _npd_matches(npd[name], ex.line), (e.id, sig.id, ex.line[:80])
            for counter in sig.counter_examples:
                assert not re2.search(regex, counter), (e.id, sig.id, counter[:80])
                if name in npd:
                    assert not _npd_matches(npd[name], counter), (e.id, sig.id, counter[:80])
            checked += 1
    assert checked > 700


def test_loki_rules_have_the_shape_the_ruler_reads() -> None:
    assert [g["name"] for g in LOKI["groups"]] == ["gpu-failure-atlas-kernel", "gpu-failure-atlas-jobs"]
    for group in LOKI["groups"]:
        assert set(group) == {"name", "interval", "rules"}
        for rule in group["rules"]:
            assert set(rule) == {"alert", "expr", "labels", "annotations"}
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", rule["alert"])
            assert rule["expr"].startswith("sum by (host) (count_over_time({job=~") and rule["expr"].endswith("[5m])) > 0")
            assert set(rule["labels"]) == {"severity", "atlas_entry"} and rule["labels"]["atlas_entry"] in CORPUS.by_id
            assert rule["annotations"]["atlas_url"] == f"{fx.PUBLIC_SITE}entries/{rule['labels']['atlas_entry']}/"


def test_the_exports_are_published_with_the_site_and_documented(built_site: Path) -> None:
    for name in ("npd-gpu-monitor.json", "loki-gpu-rules.yaml"):
        assert (built_site / "data" / name).read_text(encoding="utf-8") == FILES[name]
    page = (ROOT / "docs" / "data.md").read_text(encoding="utf-8")
    assert "npd-gpu-monitor.json" in page and "loki-gpu-rules.yaml" in page and "DaemonSet" in page
    assert f'"{fx.PUBLIC_SITE}"' in (ROOT / "mkdocs.yml").read_text()


def test_anchored_signatures_read_behind_line_heads_as_rules_json_does() -> None:
    """A pod's stream carries launcher tags: an anchored signature must still fire there, not on the word mid-sentence."""
    loki = {r["alert"]: r["expr"] for g in LOKI["groups"] for r in g["rules"]}
    anchored = [(e, sig) for e in CORPUS.entries for sig in e.signatures if sig.pattern.startswith("^")]
    assert len(anchored) > 10
    for e, sig in anchored:
        expr = loki[f"Gpu{fx._camel(e.id)}{fx._camel(sig.id)}"]
        regex = expr.split("|~ ", 1)[1].rsplit(" [5m]", 1)[0]
        regex = regex[1:-1] if regex.startswith("`") else json.loads(regex)
        for ex in sig.examples:
            bare = ex.line.lstrip()
            for head in ("[rank3]: ", "2026-12-03T04:10:11.123456789Z stderr F ", "trainer-1  | [default0]: "):
                assert re2.search(regex, head + bare), (e.id, sig.id, head + bare[:60])
        for counter in sig.counter_examples:
            assert not re2.search(regex, "note: " + counter.lstrip()), (e.id, sig.id, counter[:60])
