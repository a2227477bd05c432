"""The backtracking analysis (generator/backtracking.py) and the time budget that backs it up."""

from __future__ import annotations

import re
import time

import pytest

from generator.matcher.backtracking import risks
from generator.corpus.regex_budget import RegexTimeout, budget


@pytest.mark.parametrize("pattern, reason", [
    (r"^(a+)+b", "inside another unbounded repeat"),
    (r"(a|aa)+$", "alternatives that can start alike"),
    (r"(?:ab|a)*c", "alternatives that can start alike"),
    (r"\d*\d*\d*x", "two unbounded repeats in a row"),
    (r"[a-z]+[a-z]+[a-z]+", "two unbounded repeats in a row"),
    (r"x(?:\d*)(\d*)y", "two unbounded repeats in a row"),
    (r"NCCL WARN .*\d+", "two unbounded repeats in a row"),
    (r"\d+(?:-)?\d+", "two unbounded repeats in a row"),  # only an optional item between them
    (r"(.*a){20}", "run into the next round"),
    (r"(?:[^b]{1,5})+", "run into the next round"),
    (r"(\d+){3}", "run into the next round"),
    (r"zz(?:(?:(?:a){1,5}){1,5}){1,5}!", "run into the next round"),  # found by the fuzz test: rounds of rounds
    (r"(?:[a-z]{1,4}){1,8}x", "run into the next round"),  # 4^8 ways to split 32 letters
    (r"(?:(?:a|a){1,5}){1,5}", "alternatives that can start alike"),
    (r"(?:(?:.?){2})*", "can match nothing"),
    (r"x.*y.*z.*w", "3 unbounded wildcard repeats"),
    (r"foo(?=bar)", "lookahead or lookbehind"),
    (r"(abc)\1", "backreference"),
    ("(" * 3000 + "a" + ")" * 3000, "nested too deeply"),
    (r"All algorithms tried for .{1,2000}? failed", "repeat count over 1000"),
    # red team s29: each count under 1000 but 8,000 copies in all; RE2 refused it and --engine re2
    # reported nothing while the other engines found the failure
    (r"(?:(?:(?:a{20}){20}){20})", "counts multiply past 1000"),
    (r"(?:.{0,200}x){10}", "counts multiply past 1000"),
])
def test_each_family_of_risk_is_named(pattern: str, reason: str) -> None:
    assert any(reason in risk for risk in risks(pattern)), risks(pattern)


@pytest.mark.parametrize("pattern", [
    r"NVRM: Xid \([^)]{4,40}\): 43, pid=", r"a.*b.*c", r"(?:ab){1,3}c+", r"(\d+\.){3}\d+", r"\s+\S+",
    r"(?:foo|bar)+", r"(?:finished #[0-9]+, but|joined #)[0-9]+", r"Multinomial(?:a+|b).{0,400}Assertion",
    r"(?:a{1,2}){1,2}b", r"(?:\w{1,20}\.){0,5}x", r"(?:[0-9a-f]{2}:){5}[0-9a-f]{2}", r"(?:(?:a{10}){10}){10}",
])
def test_linear_patterns_have_no_risk(pattern: str) -> None:
    assert risks(pattern) == ()


def test_the_time_budget_stops_a_runaway_regex() -> None:
    started = time.perf_counter()
    with pytest.raises(RegexTimeout):
        with budget(0.2):
            re.search(r"(a+)+$", "a" * 40 + "!")
    assert time.perf_counter() - started < 5


def test_the_budget_lets_a_quick_run_finish_and_leaves_no_timer() -> None:
    import signal

    with budget(0.5):
        assert re.search(r"b+", "aaab")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_an_outer_budget_still_fires_after_an_inner_one_ended() -> None:
    started = time.perf_counter()
    with pytest.raises(RegexTimeout):
        with budget(0.4):
            with budget(0.1):
                re.search(r"b+", "aaab")  # quick: the inner budget ends unfired
            re.search(r"(a+)+$", "a" * 40 + "!")  # the outer one must still stop this
    assert time.perf_counter() - started < 5
