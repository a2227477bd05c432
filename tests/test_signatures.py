"""Every signature in the corpus: its own examples, and adversarial long lines in bounded time.

Examples and counter-examples are also checked by `kb validate`; running them here too
keeps the rule visible in the test report, signature by signature.
"""

from __future__ import annotations

import re
import time

import pytest

from conftest import ROOT
from generator.corpus.validated import load_corpus
from generator.corpus.literals import prefilter_literals
from generator.matcher.read import MAX_LINE_BYTES, clean

CORPUS = load_corpus(ROOT / "kb" / "entries")
SIGNATURES = [(e.id, s) for e in CORPUS.entries for s in e.signatures]
# generous: a linear pattern needs milliseconds on 64 KiB; catastrophic ones need minutes
BOUND_SECONDS = 0.5


@pytest.mark.parametrize("entry, sig", SIGNATURES, ids=[f"{e}:{s.id}" for e, s in SIGNATURES])
def test_examples_match_and_counter_examples_do_not(entry, sig) -> None:
    rx = re.compile(sig.pattern)
    for example in sig.examples:
        assert rx.search(example.line), example.line
        # as the matcher reads it (a run of backslashes read as one): a pattern must not need two in a row
        assert rx.search(clean(example.line.encode()).decode()), f"does not match as read: {example.line}"
    for counter in sig.counter_examples:
        assert not rx.search(counter), counter


def _adversarial(sig) -> list[str]:
    literals, _ = prefilter_literals(sig.pattern)
    lit = literals[0] if literals else ""
    example = sig.examples[0].line
    fillers = ["a", " ", "0", "x ", ":", "\t", "(", "é"]
    lines = []
    for filler in fillers:
        lines.append((lit + filler * MAX_LINE_BYTES)[:MAX_LINE_BYTES])
        lines.append((example[: len(example) // 2] + filler * MAX_LINE_BYTES)[:MAX_LINE_BYTES])
    lines.append((lit * (MAX_LINE_BYTES // max(1, len(lit)) + 1))[:MAX_LINE_BYTES])
    lines.append((example * (MAX_LINE_BYTES // len(example) + 1))[:MAX_LINE_BYTES])
    return lines


@pytest.mark.parametrize("entry, sig", SIGNATURES, ids=[f"{e}:{s.id}" for e, s in SIGNATURES])
def test_signature_is_fast_on_adversarial_long_lines(entry, sig) -> None:
    rx = re.compile(sig.pattern)
    for line in _adversarial(sig):
        start = time.perf_counter()
        rx.search(line)
        elapsed = time.perf_counter() - start
        assert elapsed < BOUND_SECONDS, f"{entry}:{sig.id} took {elapsed:.2f} s on a {len(line)}-character line"


def test_the_adversarial_check_catches_a_catastrophic_pattern() -> None:
    """A check that cannot fail is a defect: a nested repeat must blow the bound."""
    rx = re.compile(r"^(a+)+b")
    line = "a" * 25
    start = time.perf_counter()
    rx.search(line)
    assert time.perf_counter() - start > BOUND_SECONDS


def test_no_signature_makes_more_than_one_percent_of_noise_lines_candidates(tmp_path) -> None:
    """Throughput holds as the corpus grows only if every signature's pattern runs on few lines
    of healthy logs (bench/noise.py: training progress, NCCL INFO, kernel and k8s lines).

    A line is a candidate for a signature as the pure-Python matcher (the one the browser runs)
    decides: it contains one of the anchors listed for the signature and one of the signature's
    own prefilter literals (match.py checks those before it runs the pattern). An anchor shared by
    several signatures (a word such as 'Attempted') costs each of them only that substring check."""
    import json
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from noise import write_log  # noqa: PLC0415

    from generator.corpus.validated import load_corpus  # noqa: PLC0415
    from generator.exports.rules import compile_rules  # noqa: PLC0415

    log = tmp_path / "noise.log"
    write_log(log, 2 << 20, planted=1)  # one failure line: the noise itself is what is measured
    lines = log.read_text(encoding="utf-8").split("\n")
    lowered = [line.lower() for line in lines]
    rules = json.loads(json.dumps(compile_rules(load_corpus(ROOT / "kb" / "entries"))))
    hits: dict[int, set[int]] = {}
    for anchor in rules["anchors"]:
        text = anchor["text"].lower() if anchor["ignore_case"] else anchor["text"]
        haystack = lowered if anchor["ignore_case"] else lines
        found = {i for i, line in enumerate(haystack) if text in line}
        for sig in anchor["signatures"]:
            hits.setdefault(sig, set()).update(found)
    def gated(signature: dict, among) -> set[int]:  # noqa: ANN001 - line numbers
        """The lines among ``among`` that hold one of the signature's prefilter literals."""
        folded = signature["ignore_case"]
        literals = [lit.lower() for lit in signature["literals"]] if folded else signature["literals"]
        haystack = lowered if folded else lines
        return {i for i in among if any(lit in haystack[i] for lit in literals)}

    for sig, found in hits.items():  # the signature's own literal gate, before its pattern runs
        hits[sig] = gated(rules["signatures"][sig], found)
    worst = sorted(((len(found) / len(lines), rules["signatures"][sig]["id"], rules["signatures"][sig]["entry"])
                    for sig, found in hits.items()), reverse=True)[:5]
    assert worst[0][0] <= 0.01, f"signatures whose anchors make the most noise lines candidates: {worst}"
    # The Hyperscan scanner finds a signature by its prefilter literals alone, without the anchor,
    # when all of them are LITERAL_MIN characters or longer (native/hsscan.py): such literals must
    # be as rare in healthy logs. One that is not (' out of memory', in 'no out of memory yet')
    # pushes every piece of a log past the scanner's DENSE limit onto its slow byte-form plan.
    from generator.matcher.native.hsscan import LITERAL_MIN  # noqa: PLC0415

    alone = []
    for signature in rules["signatures"]:
        literals = signature["literals"]
        if literals and min(len(lit) for lit in literals) >= LITERAL_MIN:
            alone.append((len(gated(signature, range(len(lines)))) / len(lines), signature["id"], signature["entry"]))
    worst_alone = sorted(alone, reverse=True)[:5]
    assert worst_alone[0][0] <= 0.01, f"signatures whose literals alone make the most noise lines candidates: {worst_alone}"
