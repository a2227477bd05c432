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
    only_t = NS(id="only-t", examples=[ex("FooError: widget jammed", T + "#issuecomment-1")], counter_examples=[])
    mixed = NS(id="mixed", examples=[ex("FooError: gadget jammed", T + "/"), ex("FooError: gadget stuck", "https://x.org/a")],
               counter_examples=["FooError: gadget fine"])
    other = NS(id="other", examples=[ex("BarError: sprocket", "https://x.org/b")], counter_examples=[])
    return [NS(id="foo", title="Foo jams", aliases=[], severity="high", signatures=[only_t, mixed]),
            NS(id="bar", title="Bar fails", aliases=[], severity="high", signatures=[other])]


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


def test_it_refuses_to_list_the_holdouts_misses(capsys) -> None:  # noqa: ANN001
    assert field_loto.main([str(ROOT / "tests/fixtures/field/holdout"), "--misses"]) == 2
    assert "nobody reads the holdout" in capsys.readouterr().err
