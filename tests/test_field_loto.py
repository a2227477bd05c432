"""tools/field_loto.py: the dev sample scored with each log's own thread left out of the corpus."""

from __future__ import annotations

import sys
from types import SimpleNamespace as NS

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import field_loto  # noqa: E402

T = "https://github.com/org/repo/issues/7"


def _entries() -> list:
    ex = lambda line, source: NS(line=line, source=source)  # noqa: E731
    only_t = NS(id="only-t", pattern="widget jammed", examples=[ex("FooError: widget jammed", T + "#issuecomment-1")],
                counter_examples=[])
    mixed = NS(id="mixed", pattern="gadget (?:jammed|stuck)",
               examples=[ex("FooError: gadget jammed", T + "/"), ex("FooError: gadget stuck", "https://x.org/a")],
               counter_examples=["FooError: gadget fine"])
    other = NS(id="other", pattern="BarError", examples=[ex("BarError: sprocket", "https://x.org/b")], counter_examples=[])
    return [NS(id="foo", title="Foo jams", aliases=[], severity="high", wrapper=False, signatures=[only_t, mixed]),
            NS(id="bar", title="Bar fails", aliases=[], severity="high", wrapper=False, signatures=[other])]


def test_strict_switches_off_every_signature_with_an_example_from_the_thread_lenient_only_those_wholly_from_it() -> None:
    entries = _entries()
    assert field_loto.switched_off(entries, T, "strict") == {("foo", "only-t"), ("foo", "mixed")}
    assert field_loto.switched_off(entries, T, "lenient") == {("foo", "only-t")}
    assert field_loto.switched_off(entries, "https://x.org/c", "strict") == set()


def test_the_index_copy_drops_the_threads_example_lines_and_keeps_the_rest() -> None:
    kept = field_loto._without(_entries(), field_loto.norm(T + "#frag"))
    lines = [x.line for e in kept for s in e.signatures for x in s.examples]
    assert lines == ["FooError: gadget stuck", "BarError: sprocket"]
    assert kept[0].signatures[1].counter_examples == ["FooError: gadget fine"]
    # a wrapper's lines stay quiet in the index, as in the real one (resemble.index_for)
    wrapped = _entries()
    wrapped[1].wrapper = True
    assert [e.wrapper for e in field_loto._without(wrapped, "https://x.org/none")] == [False, True]


def test_the_index_copy_carries_the_patterns_with_the_switched_off_ones_matching_nothing() -> None:
    """index_for reads a failure's patterns to tell its line among a note's counter-examples: a
    signature written from the thread must not lend its pattern to the index either."""
    entries = _entries()
    kept = field_loto._without(entries, T, off=field_loto.switched_off(entries, T, "lenient"))
    assert [s.pattern for e in kept for s in e.signatures] == [field_loto.NEVER, "gadget (?:jammed|stuck)", "BarError"]


def test_counter_examples_found_in_the_cases_log_are_left_out_as_copied_from_its_thread() -> None:
    entries = _entries()
    log = "step 3\nFooError: gadget fine\nFooError: widget jammed\n"
    counters = field_loto.counter_examples(entries)
    assert field_loto.copied(counters, log) == {"FooError: gadget fine"}
    assert field_loto.copied(counters, "FooError: gadget") == set()  # only a whole counter-example counts
    kept = field_loto._without(entries, "https://x.org/none", field_loto.copied(counters, log))
    assert kept[0].signatures[1].counter_examples == []
    assert [x.line for x in kept[0].signatures[1].examples] == ["FooError: gadget jammed", "FooError: gadget stuck"]


def test_only_a_counter_example_in_no_other_cases_log_counts_as_copied_from_the_thread() -> None:
    found = {"a": {"FooError: gadget fine", "Traceback (most recent call last):"},
             "b": {"Traceback (most recent call last):"}, "c": set()}
    assert field_loto.own(found) == {"a": {"FooError: gadget fine"}, "b": set(), "c": set()}


def test_it_refuses_to_list_the_holdouts_misses(capsys) -> None:  # noqa: ANN001
    assert field_loto.main([str(ROOT / "tests/fixtures/field/holdout"), "--misses"]) == 2
    assert "nobody reads the holdout" in capsys.readouterr().err


def test_an_outcome_is_right_as_kb_eval_scores_it_notes_included() -> None:
    """A note (a finding of severity info) is the answer when a job is only slow: `kb eval` counts
    it as named, and as no false alarm on a healthy log; the leave-thread-out score does too."""
    note_only = field_loto.Outcome("a", "nccl", ["nccl-net-socket-fallback"], [], ["nccl-net-socket-fallback"], False, True)
    assert note_only.right
    healthy_with_note = field_loto.Outcome("b", "nccl", ["none"], [], ["nccl-net-socket-fallback"], True, True)
    assert healthy_with_note.right
    healthy_with_lead = field_loto.Outcome("c", "nccl", ["none"], ["nccl-remote-error"], ["nccl-remote-error"], True, True)
    assert not healthy_with_lead.right
