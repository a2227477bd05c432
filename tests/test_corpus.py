"""The real corpus: it validates, and a copy seeded with one defect per file reports each once."""

from __future__ import annotations

import re
import shutil
from pathlib import Path


from conftest import ROOT, run_kb
from generator.corpus.validated import load_corpus

ENTRIES = ROOT / "kb" / "entries"
LINE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<code>KB\d{3}) ", re.MULTILINE)


def test_real_corpus_validates() -> None:
    corpus = load_corpus(ENTRIES)
    assert len(corpus.entries) >= 12


def test_starting_entries_exist() -> None:
    ids = set(load_corpus(ENTRIES).by_id)
    required = {"xid-13", "xid-31", "xid-43", "xid-48", "xid-61", "xid-79", "xid-94", "cuda-illegal-memory-access",
                "cuda-out-of-memory", "cuda-device-side-assert", "nccl-watchdog-timeout", "host-oom-kill"}
    assert required <= ids, sorted(required - ids)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_seeded_copy_reports_one_line_per_defect(tmp_path: Path) -> None:
    root = tmp_path / "entries"
    shutil.copytree(ENTRIES, root)
    used: set[Path] = set()
    expected: dict[str, str] = {}
    # copies sort after their originals, so the copy is the one reported
    copies = root / "zz-copies"
    copies.mkdir()
    plain = next(p for p in sorted(root.rglob("*.yaml")) if not p.name.startswith("xid-"))
    dup = copies / plain.name
    shutil.copy(plain, dup)
    expected[dup.relative_to(tmp_path).as_posix()] = "KB011"
    xid_src = next(p for p in sorted((root / "xid").glob("xid-*.yaml")))
    xid_dup = copies / "xid-1079.yaml"
    shutil.copy(xid_src, xid_dup)
    _edit(xid_dup, f"\nid: {xid_src.stem}\n", "\nid: xid-1079\n")
    expected[xid_dup.relative_to(tmp_path).as_posix()] = "KB013"
    used.update({plain, xid_src, dup, xid_dup})

    def seed(code: str, pattern: str, repl: str) -> None:
        rx = re.compile(pattern, re.MULTILINE)
        path = next(p for p in sorted(root.rglob("*.yaml")) if p not in used and rx.search(p.read_text(encoding="utf-8")))
        used.add(path)
        path.write_text(rx.sub(repl, path.read_text(encoding="utf-8"), count=1), encoding="utf-8")
        expected[path.relative_to(tmp_path).as_posix()] = code

    seed("KB001", r"^summary: \|$", "summary: |\n  ok\n bad: [unclosed")
    seed("KB002", r"^severity: (.*)$", r"severity: \1\nseverity: \1")
    seed("KB003", r"^root_cause:", "root_cuase: typo\nroot_cause:")
    seed("KB004", r"^title: .*$", "title: 42")
    seed("KB005", r"^owner: .*\n", "")
    seed("KB010", r"^id: (.*)$", r"id: renamed-\1")
    seed("KB012", r"^related: \[", "related: [no-such-entry, ")
    seed("KB020", r"^    pattern: .*$", "    pattern: '(unclosed'")
    seed("KB021", r"^      - line: .*$", "      - line: 'zzz-this-matches-nothing-zzz'")
    seed("KB030", r"^    url: https://.*$", "    url: htp:/example")
    seed("KB040", r"^root_cause: \|\n", "root_cause: |\n  <script>alert(1)</script>\n")
    # a counter-example equal to the first example must be matched
    path = next(p for p in sorted(root.rglob("*.yaml"))
                if p not in used and "    counter_examples:\n      - " in p.read_text(encoding="utf-8"))
    used.add(path)
    text = path.read_text(encoding="utf-8")
    at = text.index("    counter_examples:\n")
    line_start = text.rindex("      - line: ", 0, at) + len("      - line: ")
    example = text[line_start:text.index("\n", line_start)]  # an example of the same signature
    _edit(path, "    counter_examples:\n", f"    counter_examples:\n      - {example}\n")
    expected[path.relative_to(tmp_path).as_posix()] = "KB022"
    result = run_kb("validate", "entries", cwd=tmp_path)
    assert result.code == 1
    found = [(m.group("path"), m.group("code")) for m in LINE.finditer(result.out)]
    assert sorted(found) == sorted(expected.items()), result.out
    assert f"{len(expected)} problems in {len(expected)} files" in result.err


def test_missing_root_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run_kb("validate", str(tmp_path / "nope"))
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1 and "no such folder" in result.err
