"""The corpus quality bar: coverage of the targets, depth where promised, sources, real examples.

(Shared boilerplate between entries is refused by validation itself: KB050.)
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import ROOT
from generator.corpus.validated import load_corpus
from generator.corpus.literals import prefilter_literals

CORPUS = load_corpus(ROOT / "kb" / "entries")
BY_ID = CORPUS.by_id
TARGETS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus-targets.md"

# full depth is promised for these Xid codes (corpus-targets.md)
FULL_DEPTH_XIDS = [8, 13, 31, 32, 38, 43, 44, 45, 46, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 110, 119,
                   120, 121, 136, 137, 140, 143, *range(144, 151), 154, 155, 156, 158, 171, 172]
FULL_DEPTH_XIDS.remove(61)  # legacy code: a concise entry (its catalog row says Unused)

# Full-depth codes for which no real log line was found at a citable public address: their
# entries say so, and the matcher still recognises their Xid lines by code. A signature is
# added as soon as a real line turns up (a GPU machine reproducing the fault would do).
NO_PUBLIC_LOG_LINE = {
    46: "no public line; the catalog documents no message text",
    68: "no public NVDEC0 line",
    92: "message text known from driver source only",
    95: "message text known from driver source and tests only",
    110: "no public line",
    121: "no public line (GB200 only)",
    136: "no public line (H100 NVLink training)",
    143: "the only public line sits in a file whose address could not be pinned",
    146: "only synthetic test strings are public",
    147: "only synthetic test strings are public",
    148: "only synthetic test strings are public",
    155: "no public line",
    156: "no public line",
    158: "no public line; NVIDIA documents no trigger",
    171: "no public line",
    172: "message text known from driver source only",
}

# hosts whose pages are primary sources: vendors' and projects' own documentation and trackers
PRIMARY = ("docs.nvidia.com", "developer.nvidia.com", "www.nvidia.com", "nvidia.github.io", "pytorch.org", "docs.pytorch.org",
           "kernel.org", "docs.kernel.org", "www.kernel.org", "man7.org", "slurm.schedmd.com", "kubernetes.io",
           "www.tensorflow.org", "tensorflow.org", "triton-lang.org", "docs.python.org", "www.deepspeed.ai",
           "deepspeed.readthedocs.io", "huggingface.co", "docs.docker.com", "github.com", "gitlab.com")


def _targets() -> list[str]:
    if not TARGETS.exists():
        pytest.skip("../shared/corpus-targets.md is not beside this checkout")
    return re.findall(r"^\| ([a-z0-9]+(?:-[a-z0-9]+)+) \|", TARGETS.read_text(encoding="utf-8"), re.M)


def test_every_xid_code_from_1_to_172_and_185_has_an_entry() -> None:
    codes = {e.xid.code for e in CORPUS.xid_entries()}
    missing = sorted((set(range(1, 173)) | {185}) - codes)
    assert not missing, f"Xid codes without an entry: {missing}"


def test_every_target_id_has_an_entry() -> None:
    missing = [t for t in _targets() if t not in BY_ID]
    assert not missing, missing


@pytest.mark.parametrize("code", FULL_DEPTH_XIDS)
def test_full_depth_xid_entries(code: int) -> None:
    e = BY_ID.get(f"xid-{code}")
    assert e is not None, f"xid-{code} is missing"
    assert e.mechanism and e.mechanism.strip(), "mechanism"
    assert any(step.command for step in e.confirm), "a confirm step with a command"
    assert any(step.command for step in e.fix), "a fix step with a command"
    assert any(step.rung == "verify" for step in e.fix), "a verification step"
    if code in NO_PUBLIC_LOG_LINE:
        return
    assert e.signatures and all(s.examples for s in e.signatures), "real-log signatures"


def _most_posted(n: int) -> list[str]:
    """The ``n`` failure classes engineers post most, by how often the dev field sample's labels
    name them (the sample is real logs from public threads; the holdout is not read)."""
    import collections

    import yaml

    labels = yaml.safe_load((ROOT / "tests" / "fixtures" / "field" / "dev" / "labels.yaml").read_text(encoding="utf-8"))
    counts = collections.Counter(str(label["expected"]) for label in labels if str(label["expected"]) in BY_ID)
    return [entry_id for entry_id, _ in counts.most_common(n)]


@pytest.mark.parametrize("entry_id", _most_posted(50))
def test_the_fifty_most_posted_failures_have_full_depth(entry_id: str) -> None:
    """Issue 12: the 50 most frequent classes deserve full depth, not a compact entry: how the
    fault becomes the messages, how it shows across a fleet, what the reader sees and why, how to
    confirm and fix it with commands, how to prevent it, and related entries."""
    e = BY_ID[entry_id]
    missing = [name for name, value in (("mechanism", e.mechanism), ("at_scale", e.at_scale), ("symptoms", e.symptoms),
                                        ("prevent", e.prevent), ("related", e.related)) if not value]
    assert not missing, f"{entry_id} lacks {missing}"
    assert any(step.command for step in e.confirm), "a confirm step with a command"
    assert any(step.command for step in e.fix), "a fix step with a command"


def test_exemptions_are_not_stale() -> None:
    """An entry that has gained a real-log signature must leave the exemption lists."""
    stale = [f"xid-{c}" for c in NO_PUBLIC_LOG_LINE if BY_ID[f"xid-{c}"].signatures]
    stale += [i for i in NO_PUBLIC_EXAMPLE_YET if BY_ID[i].signatures]
    assert not stale, f"remove from the exemption lists: {stale}"


# Non-Xid entries without a real public log line of their own:
NO_PUBLIC_EXAMPLE_YET = {
    "distributed-hang": "a hang prints nothing of its own; it is recognised by its collateral",
}


@pytest.mark.parametrize("entry", [e for e in CORPUS.entries if e.category != "xid"], ids=lambda e: e.id)
def test_non_xid_entries_have_real_example_lines(entry) -> None:
    if entry.id in NO_PUBLIC_EXAMPLE_YET and not entry.signatures:
        return
    assert entry.signatures, "a non-Xid entry needs a signature with real example lines"
    for sig in entry.signatures:
        assert sig.examples and all(x.source.startswith("http") for x in sig.examples)


@pytest.mark.parametrize("entry", CORPUS.entries, ids=lambda e: e.id)
def test_sections_are_not_empty_and_sources_are_authoritative(entry) -> None:
    for name in ("title", "summary", "root_cause"):
        assert getattr(entry, name).strip(), name
    hosts = {urlsplit(r.url).hostname for r in entry.references}
    assert hosts & set(PRIMARY), f"no primary source among {sorted(hosts)}"


@pytest.mark.parametrize("entry", CORPUS.entries, ids=lambda e: e.id)
def test_drastic_fix_steps_give_the_exact_command(entry) -> None:
    for step in entry.fix:
        if step.rung in ("reset-gpu", "reboot-node", "drain-node"):
            assert step.command, f"the '{step.rung}' step needs its exact command: {step.text[:60]}"


@pytest.mark.parametrize("entry", CORPUS.entries, ids=lambda e: e.id)
def test_generic_patterns_carry_counter_examples(entry) -> None:
    for sig in entry.signatures:
        literals, _ = prefilter_literals(sig.pattern)
        generic = min((len(x) for x in literals), default=0) < 16 or ".*" in sig.pattern
        if generic:
            assert sig.counter_examples, f"signature '{sig.id}' is generic (short literal or .*): add counter-examples"
