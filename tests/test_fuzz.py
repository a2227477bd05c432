"""Fuzzing (Hypothesis) over the YAML loader and validator, the pattern analysis, the log reader
and the matcher. `make test` runs each briefly (profile "ci"); `make fuzz` runs them long
(profile "fuzz"). A crash found here becomes a regression case in the test module it concerns.

What must hold, whatever the input: validation ends quickly and reports problems as
path:line:col lines (never a traceback); a pattern the analysis passes runs in near-linear
time on adversarial lines; the reader keeps line numbers and bounded pieces; the matcher
returns a report whose text and Markdown forms carry no control character.
"""

from __future__ import annotations

import io
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT, run_kb

settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("fuzz", max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# ---- YAML and validation ---------------------------------------------------------------

VALID = (ROOT / "tests" / "golden" / "validate" / "clean" / "entries" / "cuda" / "demo-failure.yaml").read_text()
_scalar = st.one_of(st.text(max_size=30), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=True))


def _alias_bomb(levels: int, width: int) -> str:
    lines = ['a0: &a0 ["x"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * width) + "]")
    return "\n".join(lines) + "\n"


hostile_yaml = st.one_of(
    st.builds(_alias_bomb, st.integers(2, 12), st.integers(2, 12)),
    st.builds(lambda n: "x: " + "[" * n + "]" * n + "\n", st.integers(1, 20000)),
    st.builds(lambda n: "x:\n" + "".join("  " * i + "- \n" for i in range(n)), st.integers(1, 300)),
    st.builds(lambda t: VALID + t, st.sampled_from(["extra: !!python/object:os.system ls\n", "<<: *x\n", "? [a, b]\n: 1\n",
                                                    "summary: &s x\nroot_cause: *s\n", "\t\tbad: indent\n", "id: [\n"])),
    st.builds(lambda data: yaml_dump_safe(data), st.recursive(_scalar, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=30)),
    st.binary(max_size=2000).map(lambda b: b.decode("latin-1")),
    st.builds(lambda p, c: VALID.replace("'something broke at step [0-9]+'", repr(p)).replace('"INFO nothing broke"', repr(c)),
              st.sampled_from([r"something broke(a+)+$", r"something broke(a|aa)+$", r"something broke(\d*)*x",
                               "something broke" + "(" * 500 + ")" * 500, r"something broke[", r"something broke(?P<x>a)(?P=x)",
                               r"something broke\d{99999999999}", r"something broke(a{1,1000}){1,1000}"]),
              st.sampled_from(["something broke" + "a" * 5000 + "!", "x" * 70000])),
)


def yaml_dump_safe(data: object) -> str:
    import yaml

    try:
        return yaml.safe_dump(data)
    except Exception:  # noqa: BLE001 - a float the dumper refuses
        return "x: 1\n"


@given(text=hostile_yaml)
def test_validation_of_hostile_yaml_ends_quickly_and_never_prints_a_traceback(tmp_path_factory, text: str) -> None:
    folder = tmp_path_factory.mktemp("fuzz") / "entries" / "cuda"
    folder.mkdir(parents=True)
    (folder / "demo-failure.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
    from generator.corpus.regex_budget import budget

    with budget(20):  # a validation still running after 20 s fails the test (RegexTimeout: exit 2)
        result = run_kb("validate", str(folder.parent))
        formatted = run_kb("fmt", "--check", str(folder.parent))  # kb fmt reads entries its own way
    assert formatted.code in (0, 1) and "Traceback" not in formatted.out + formatted.err, formatted.err[-500:]
    assert result.code in (0, 1), (result.code, result.err[-500:])
    assert "Traceback" not in result.out + result.err
    problems = [line for line in result.out.splitlines() if re.match(r"^\S.*:\d+:\d+: KB\d{3} ", line)]
    assert result.code == 0 or problems, result.out[-500:]


# ---- pattern analysis ------------------------------------------------------------------

atoms = st.sampled_from(["a", "b", ".", r"\d", "[ab]", "[^b]", r"\s", r"\S", "ab", "1"])
patterns = st.recursive(atoms, lambda inner: st.one_of(
    st.tuples(inner, inner).map("".join),
    st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{1,5}", "{3,}"])).map(lambda t: f"(?:{t[0]}){t[1]}"),
    st.tuples(inner, inner).map(lambda t: f"(?:{t[0]}|{t[1]})"),
), max_leaves=8)
ADVERSARIAL = ["a" * 3000 + "!", "ab" * 1500 + "!", "1" * 3000 + "x", " " * 3000 + "!", "a1 " * 1000]


@given(pattern=patterns)
def test_a_pattern_the_analysis_passes_never_runs_away(pattern: str) -> None:
    from generator.matcher.backtracking import risks
    from generator.corpus.regex_budget import RegexTimeout, budget

    if risks(pattern):
        return
    rx = re.compile("zz" + pattern + "!")  # signatures lead with a literal: the matcher needs one
    for line in ADVERSARIAL:
        try:
            with budget(2.0):
                rx.search("zz" + line)
        except RegexTimeout:
            pytest.fail(f"{pattern!r} passed the analysis but backtracks on {line[:20]!r}...")


# ---- the log reader and the matcher ----------------------------------------------------

REAL_LINES = [
    b"[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
    b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    b"[rank3]: RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error",
    b"pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
]
pieces = st.one_of(st.sampled_from(REAL_LINES), st.binary(max_size=200),
                   st.sampled_from([b"\n", b"\r", b"\r\n", b"\x1b[31m", b"\x1b]52;c;eA==\x07", b"\x00", b"\xff\xfe", b"`"]),
                   st.builds(lambda n: b"x" * n, st.integers(60000, 140000)))


@given(parts=st.lists(pieces, max_size=30), chunk=st.integers(1, 1 << 17))
def test_the_reader_keeps_line_numbers_and_bounded_pieces(parts: list[bytes], chunk: int) -> None:
    from generator.matcher.read import MAX_LINE_BYTES, InputStats, chunks

    data = b"".join(parts)
    stats = InputStats()
    last = 0
    for c in chunks(io.BytesIO(data), stats, chunk):
        assert c.first_line >= last
        last = c.first_line
        assert all(len(line) <= MAX_LINE_BYTES + 1 for line in c.data.split(b"\n"))
    if stats.cr_lines:  # lines that end in CR alone: each CR (or CR LF) read as a line break
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    expected = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    assert stats.lines == expected and stats.bytes == len(b"".join(parts))


@given(parts=st.lists(pieces, max_size=25), name=st.text(max_size=20))
def test_the_matcher_reports_on_any_bytes_without_control_characters(real_diagnoser, parts: list[bytes], name: str) -> None:
    import json

    from generator.matcher import to_json, to_markdown, to_text

    report = real_diagnoser.diagnose(io.BytesIO(b"".join(parts)))
    json.loads(to_json(report))
    for rendered in (to_text(report, name), to_markdown(report, name)):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", rendered), rendered[:300]
