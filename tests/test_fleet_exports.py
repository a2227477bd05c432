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


def _safe_dump(doc: dict) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)


def test_loki_text_is_what_pyyaml_writes() -> None:
    """fx.loki_yaml writes most rules with libyaml: the file must be PyYAML's own text, byte for byte."""
    doc = fx.loki_rules(CORPUS, fx.site_address())
    rules = [r for g in doc["groups"] for r in g["rules"]]
    assert sum(map(fx._emitters_agree, rules)) > len(rules) // 2, "most rules take libyaml's path"
    assert FILES["loki-gpu-rules.yaml"].split("\n", 2)[2] == _safe_dump(doc)


def test_loki_yaml_equals_pyyaml_on_random_rules() -> None:
    """Rules with text libyaml writes otherwise (U+0085, characters past U+FFFF, line separators,
    tabs, lines past the width) go to PyYAML; the rest go to libyaml: the joined text is PyYAML's."""
    import random  # noqa: PLC0415

    rng = random.Random(11)
    pieces = [" ", "  ", "- ", "? ", ": ", " #", "---", "...", "%", "@", "`", "!", "&", "*", "|", ">", "'", '"', "\\",
              "{", "}", "[", "]", ",", "null", "~", "yes", "1.5e3", "0x1F", "2024-01-01", "<<", "é", "漢", "\xa0",
              "\ufffd", "word", "NVRM: Xid", "(?i)", "\\d+", "https://x.org/a?b=c#d", "\x85", "\U0001F600", "\u2028",
              "\ufeff", "\t", "\n", "\r", "\x00"]

    def text(rare: float) -> str:
        count = rng.choice([0, 1, 3, 10, 40, 400 if rng.random() < rare else 40])  # 400: past the width
        return "".join(rng.choice(pieces[:-8] if rng.random() > rare else pieces) for _ in range(count))

    def rule(rare: float) -> dict:
        return {"alert": text(rare), "expr": text(rare), "labels": {"severity": text(rare), "atlas_entry": text(rare)},
                "annotations": {"summary": text(rare), "description": text(rare), "atlas_url": text(rare)}}

    paths = set()
    for _ in range(150):
        rare = rng.choice([0.0, 0.02, 0.3])
        groups = [{"name": name, "interval": "1m", "rules": [rule(rare) for _ in range(rng.randrange(0, 6))]}
                  for name in ("gpu-failure-atlas-kernel", "gpu-failure-atlas-jobs")]
        doc = {"groups": groups}
        paths.update(fx._emitters_agree(r) for g in groups for r in g["rules"])
        assert fx.loki_yaml(doc) == _safe_dump(doc)
    assert paths == {True, False}
    odd = {"groups": [{"rules": [rule(0.0)], "name": "x"}], "other": 1}  # another shape: PyYAML whole
    assert fx.loki_yaml(odd) == _safe_dump(odd)
    shared = rule(0.0)  # one object twice: PyYAML writes an anchor and an alias
    twice = {"groups": [{"name": "x", "interval": "1m", "rules": [shared, rule(0.0), shared]},
                        {"name": "y", "interval": "1m", "rules": [{**rule(0.0), "labels": shared["labels"]}, rule(0.0)]}]}
    assert "&id001" in _safe_dump(twice) and fx.loki_yaml(twice) == _safe_dump(twice)
