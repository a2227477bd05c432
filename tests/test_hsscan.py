"""The Hyperscan scanner (generator/matcher/native/hsscan.py): what it names, what it keeps in the
cache folder, and the rules-analysis pass the CLI remembers (generator/matcher/native/cache.py)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from generator.matcher import Diagnoser
from generator.matcher.scan import MARKERS

hsscan = pytest.importorskip("generator.matcher.native.hsscan")
pytestmark = pytest.mark.skipif(not hsscan.available(), reason="hyperscan is not installed")

PATTERNS = [
    ("CUDA error: out of memory", False, ["CUDA error: out of memory"]),
    (r"NCCL WARN .{0,40}Connection refused", False, ["Connection refused"]),
    (r"(?i)watchdog caught collective operation timeout", True, ["watchdog caught collective operation timeout"]),
]
LOG = (b"step 1 ok\n"
       b"RuntimeError: CUDA error: out of memory\n"
       b"node1:12:12 [0] NCCL WARN Call to connect returned Connexion refus\xc3\xa9e \xe2\x80\x93 Connection refused\n"
       b"kernel: [ 12.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
       b"[Rank 0] WATCHDOG CAUGHT COLLECTIVE OPERATION TIMEOUT\n")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_each_candidate_line_names_the_signatures_that_matched_and_the_markers_seen() -> None:
    scanner = hsscan.HyperscanScanner(PATTERNS, ["NVRM: Xid ("])
    lines, markers, _ = scanner.submit(LOG).result()
    got = [(LOG[s:e].split(b" ")[0], sorted(names)) for s, e, names in lines]
    assert got == [(b"RuntimeError:", [0]), (b"node1:12:12", [1]), (b"kernel:", []), (b"[Rank", [2])]
    assert scanner.candidate_lines(LOG) == lines
    assert markers == {b"kernel: ["}
    assert set(MARKERS) >= markers
    assert scanner.submit(b"nothing here\n").result()[:2] == ([], frozenset())


def test_a_piece_dense_with_candidates_is_named_by_the_byte_forms() -> None:
    """Literals find a signature's lines cheaply but also lines its pattern rejects; a piece with
    more than DENSE matches is named by the byte forms instead (only what may match)."""
    scanner = hsscan.HyperscanScanner(PATTERNS, ["NVRM: Xid ("])
    near = b"curl: (7) Failed to connect: Connection refused\n"  # the literal, not the NCCL pattern
    real = b"node1:12:12 [0] NCCL WARN Call to connect returned Connection refused\n"
    sparse = scanner.submit(near * 10 + real).result()[0]
    assert [sorted(n) for _, _, n in sparse] == [[1]] * 11  # literals: every line a candidate
    assert scanner._precise is None  # noqa: SLF001 - the byte forms are not compiled for a sparse piece
    dense_log = near * (hsscan.DENSE + 1) + real
    dense = scanner.submit(dense_log).result()[0]
    assert [(dense_log[a:b], sorted(n)) for a, b, n in dense] == [(real.rstrip(b"\n"), [1])]


def test_the_compiled_database_is_kept_and_reused(_own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = hsscan.HyperscanScanner(PATTERNS, ["NVRM: Xid ("])
    kept = sorted(_own_cache.glob("hyperscan-*.db"))
    assert len(kept) == 2 and all(k.stat().st_size > 0 for k in kept)  # the signatures', the progress lines'

    def no_compile(items):  # noqa: ANN001, ANN202
        raise AssertionError("compiled although the cache holds the database")

    monkeypatch.setattr(hsscan, "_compile", no_compile)
    monkeypatch.setattr(hsscan, "to_bytes", no_compile)  # the plan is kept too: no pattern rewritten
    second = hsscan.HyperscanScanner(PATTERNS, ["NVRM: Xid ("])
    assert second.candidate_lines(LOG) == first.candidate_lines(LOG)
    assert len(list(_own_cache.glob("hyperscan-plan-*"))) == 1


def test_the_cache_keeps_the_newest_files_of_each_kind(_own_cache: Path) -> None:
    import os  # noqa: PLC0415

    from generator.matcher.native import cache  # noqa: PLC0415

    for n in range(cache.KEEP + 3):
        cache.write(f"hyperscan-plan-{n:04d}", b"{}")
        os.utime(_own_cache / f"hyperscan-plan-{n:04d}", (1_000_000 + n, 1_000_000 + n))
    cache.write("hyperscan-0000.db", b"x")  # another kind: not counted with the plans
    plans = sorted(p.name for p in _own_cache.glob("hyperscan-plan-*"))
    assert len(plans) == cache.KEEP and plans[0] == "hyperscan-plan-0003"
    assert (_own_cache / "hyperscan-0000.db").exists()


def test_a_damaged_cache_file_is_compiled_again(_own_cache: Path) -> None:
    hsscan.HyperscanScanner(PATTERNS, [])
    kept = sorted(_own_cache.glob("hyperscan-*.db"))
    for path in kept:
        path.write_bytes(b"not a database")
    again = hsscan.HyperscanScanner(PATTERNS, [])
    assert [sorted(n) for _, _, n in again.candidate_lines(LOG)] == [[0], [1], [2]]
    assert all(path.read_bytes() != b"not a database" for path in kept)  # replaced by good ones


def test_an_unwritable_cache_folder_costs_only_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("KB_CACHE_DIR", str(blocker / "cache"))  # a folder below a file: cannot exist
    scanner = hsscan.HyperscanScanner(PATTERNS, [])
    assert len(scanner.candidate_lines(LOG)) == 3


def test_progress_lines_are_found_where_the_python_patterns_find_them() -> None:
    from generator.matcher.progress import PROGRESS, tail_start  # noqa: PLC0415

    body = (b"iteration      100/    1000 | lm loss: 2.1 | step: 5\n"
            b" 45%|####5     | 120/266 [00:10<00:12, 9.1it/s]\n"
            b"[rank3]: Step 7/100 global_step=12 iter: 3\n")
    data = b"noise line that says nothing\n" * 6000 + body  # longer than the tail: only the tail is searched
    scanner = hsscan.HyperscanScanner(PATTERNS, [])
    _, _, found = scanner.submit(data).result()
    window = tail_start(data)
    assert window > 0
    expected = sorted({(m.start(), k) for k, rx in enumerate(PROGRESS) for m in rx.finditer(data, window)})
    assert found == expected and len(found) >= 6


def test_the_same_report_as_the_pure_python_scanner_on_multibyte_lines(rules_for_engines: dict) -> None:
    fast = Diagnoser(rules_for_engines, scanner_factory=hsscan.HyperscanScanner.for_matcher)
    assert fast.diagnose(io.BytesIO(LOG)) == Diagnoser(rules_for_engines).diagnose(io.BytesIO(LOG))


def test_a_rules_file_analysed_once_is_not_analysed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           rules_for_engines: dict) -> None:
    import json  # noqa: PLC0415

    from generator.cli import diagnose  # noqa: PLC0415
    from generator.matcher import rules as rules_module  # noqa: PLC0415

    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules_for_engines), encoding="utf-8")
    calls: list[str] = []
    real = rules_module.risks
    monkeypatch.setattr(rules_module, "risks", lambda p: calls.append(p) or real(p))
    assert diagnose._load(path)["hash"] == rules_for_engines["hash"]
    analysed = len(calls)
    assert analysed >= len(rules_for_engines["signatures"])
    diagnose._load(path)
    assert len(calls) == analysed  # remembered: not analysed again
    other = dict(rules_for_engines, generated="another build")
    other["hash"] = "sha256:" + __import__("hashlib").sha256(rules_module.canonical(other).encode()).hexdigest()
    path.write_text(json.dumps(other), encoding="utf-8")
    diagnose._load(path)
    assert len(calls) == 2 * analysed  # other content: analysed


def test_the_same_bytes_are_only_parsed_and_an_edited_file_is_still_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                            rules_for_engines: dict) -> None:
    import json  # noqa: PLC0415

    from generator.cli import diagnose  # noqa: PLC0415
    from generator.matcher import rules as rules_module  # noqa: PLC0415
    from generator.matcher.errors import RulesError  # noqa: PLC0415

    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules_for_engines), encoding="utf-8")
    checks: list[str] = []
    real = rules_module.check
    monkeypatch.setattr(rules_module, "check", lambda doc, where="rules", analyse=True: checks.append(where) or real(doc, where, analyse))
    diagnose._load(path)
    assert len(checks) == 1
    assert diagnose._load(path) == rules_for_engines and len(checks) == 1  # these bytes passed: parsed only
    path.write_text(json.dumps(rules_for_engines, indent=1), encoding="utf-8")  # same content, other bytes
    diagnose._load(path)
    assert len(checks) == 2
    edited = json.dumps(rules_for_engines).replace('"severity": "critical"', '"severity": "low"', 1)
    assert edited != json.dumps(rules_for_engines)
    path.write_text(edited, encoding="utf-8")
    with pytest.raises(RulesError, match="does not match its hash"):
        diagnose._load(path)


@pytest.fixture(scope="module")
def rules_for_engines() -> dict:
    from generator.cli.diagnose import ensure_rules  # noqa: PLC0415

    from conftest import ROOT  # noqa: PLC0415

    return ensure_rules(None, ROOT / "kb" / "entries")
