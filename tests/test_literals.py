"""Static analysis of signature patterns: required literals, prefilter choice, backtracking risks."""

from __future__ import annotations

import re

import pytest

from generator.corpus.literals import compile_pattern, long_enough, prefilter_literals, rarity, required_runs


@pytest.mark.parametrize("pattern, runs", [
    (r"CUDA out of memory\. Tried to allocate \d+", ["CUDA out of memory. Tried to allocate "]),
    (r"Watchdog caught (?:collective )?operation timeout", ["Watchdog caught ", "operation timeout"]),
    (r"(?:GPU has fallen off the bus)", ["GPU has fallen off the bus"]),
    (r"a|b", []),
])
def test_required_runs(pattern: str, runs: list[str]) -> None:
    assert required_runs(pattern) == (runs, False)


def test_required_runs_are_lower_cased_when_the_pattern_ignores_case() -> None:
    assert required_runs(r"(?i)No Space Left") == (["no space left"], True)


def test_prefilter_takes_the_rarest_required_run() -> None:
    literals, ignore_case = prefilter_literals(r"NCCL WARN .{0,80}Cuda failure 'out of memory'")
    assert literals == ["Cuda failure 'out of memory'"] and not ignore_case


def test_prefilter_uses_every_alternative_of_a_required_alternation() -> None:
    literals, _ = prefilter_literals(r"(?:No space left on device|Disk quota exceeded)")
    assert sorted(literals) == ["Disk quota exceeded", "No space left on device"]


def test_an_everyday_word_gives_way_to_a_rarer_alternation() -> None:
    # Python's parser factors 'loss' out of the alternatives; scanning for it would make every
    # training progress line a candidate, so the alternatives (each naming the NaN) are used
    literals, ignore_case = prefilter_literals(r"(?i)\b(?:loss: nan|loss = nan)\b")
    assert sorted(literals) == [" = nan", ": nan"] and ignore_case
    # a distinctive run still wins over an alternation
    literals, _ = prefilter_literals(r"Xid \(PCI:[0-9a-f:]+\): (?:79|48), ")
    assert literals == ["Xid (PCI:"]
    # a run of everyday words ('failed to ', rare enough by length) gives way to an alternation
    # that names the fault: scanning for it made every 'failed to' line a candidate
    literals, _ = prefilter_literals(r"failed to (?:register CUDA shared memory region|open CUDA IPC handle: )")
    assert sorted(literals) == ["open CUDA IPC handle: ", "register CUDA shared memory region"]
    literals, _ = prefilter_literals(r"(?:Failed to install the kernel module through DKMS|Failed to run [^ ]{0,40}dkms build -m nvidia)")
    assert sorted(literals) == ["dkms build -m nvidia", "install the kernel module through DKMS"]


def test_rarity_ranks_everyday_words_below_distinctive_text() -> None:
    assert rarity("loss") < 0 < rarity(": nan") < rarity("Killed process ")
    assert rarity("error") < rarity("ECC")


def test_a_phrase_of_everyday_words_gives_way_to_an_identifier() -> None:
    # ' out of memory' is longer than 'cudaMalloc' but reads like prose any log may hold ('no out
    # of memory yet'); as the prefilter it made 6.7 % of healthy lines candidates and sent the
    # Hyperscan scanner onto its slow plan (session 17's job bench)
    assert rarity(" out of memory") < rarity("cudaMalloc")
    assert rarity("failed to ") < rarity("WARN ")
    literals, _ = prefilter_literals(r"cudaMalloc(?:Managed)?\(.{0,200}\) failed(?: with error|:) out of memory")
    assert literals == ["cudaMalloc"]
    # a phrase with a distinctive word or punctuation keeps its length's worth
    assert rarity(" out of memory") < rarity("CUDA out of memory. Tried to allocate")


def test_compile_pattern_behaves_like_re_compile() -> None:
    pattern = r"(?i)unexpected pos \d+ vs \d+"
    line = "RuntimeError: [enforce fail at inline_container.cc:588] . unexpected pos 704 vs 598"
    assert bool(compile_pattern(pattern).search(line)) == bool(re.compile(pattern).search(line)) is True
    with pytest.raises(re.error):
        compile_pattern(r"(unclosed")


@pytest.mark.parametrize("literal, enough", [
    ("Killed", True), ("Kill", True), (" ab ", False), ("abc", False),
    ("已杀死", True),  # three characters, nine bytes: a translated shell's "Killed"
    ("죽었음", True),
    ("错误", False),  # two characters (six bytes): "error", in every Chinese log
    ("éèà", False),  # three characters, six bytes
])
def test_a_literal_is_long_enough_by_characters_or_by_bytes_of_wide_ones(literal: str, enough: bool) -> None:
    assert long_enough(literal) is enough


def test_a_pattern_of_translated_words_takes_each_as_a_literal() -> None:
    lits, _ = prefilter_literals(r"^\s*(?:已杀死|Getötet|죽었음)\s*$")
    assert sorted(lits) == sorted(["已杀死", "Getötet", "죽었음"])
    lits, _ = prefilter_literals(r"^\s*(?:错误|Getötet)\s*$")
    assert "错误" not in lits


def test_everyday_words_tell_log_vocabulary_from_a_products_own_words() -> None:
    from generator.corpus.literals import everyday_words

    assert everyday_words("Failed to ") == ["Failed"]
    assert everyday_words("CUDA out of memory") == ["CUDA", "memory"]
    assert everyday_words("ERROR: ") == ["ERROR"]
    assert everyday_words(" -> 6") == []
    assert everyday_words("cudaMalloc failed") is None
    assert everyday_words("NCCL WARN") is None


def test_names_its_own_looks_inside_every_alternative() -> None:
    from generator.corpus.literals import names_its_own

    def rare(literal: str, ignore_case: bool) -> bool:
        return literal not in {"failed to ", "error", "cuda", "call to "}

    assert names_its_own("failed to (?:extend /dev/shm/|create shared memory file)", rare)[0]
    assert not names_its_own("failed to (?:extend|[a-z]+ shm)", rare)[0]  # one alternative names nothing
    assert names_its_own("(?i)CUDA.*error", rare) == (False, ["cuda", "error"], True)
    assert names_its_own("(?i)(?:call to|failed to) (?:shm_open|posix_fallocate)", rare)[0]


def test_the_healthy_sample_is_the_benchmark_noise() -> None:
    """generator/corpus/healthy.py renders the benchmark's noise templates (bench/noise.py writes
    its big logs from the same templates and the same renderer)."""
    import sys

    from conftest import ROOT
    from generator.corpus import healthy

    sys.path.insert(0, str(ROOT / "bench"))
    from noise import NOISE  # noqa: PLC0415

    assert NOISE == list(healthy.TEMPLATES)
    lines, lowered = healthy.sample()
    assert len(lines) == healthy.LINES and healthy.sample() is healthy.sample()
    assert abs(healthy.share(("NCCL INFO ",), False) - 2 / len(NOISE)) < 0.02
    assert healthy.share(("nccl info ",), True) == healthy.share(("NCCL INFO ",), False)
    assert healthy.share(("no such text",), False) == 0
