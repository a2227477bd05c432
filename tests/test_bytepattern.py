"""The byte form of each signature (generator/matcher/native/bytepattern.py) finds every line the
Python pattern finds: on every corpus example and counter-example and every line of the real logs."""

from __future__ import annotations

import re

import pytest

from generator.matcher.native.bytepattern import Unsupported, to_bytes

from conftest import ROOT


def _byte_rx(pattern: str) -> re.Pattern:
    body, ignore_case = to_bytes(pattern)
    return re.compile(body.encode(), re.M | (re.I if ignore_case else 0))


@pytest.mark.parametrize(("pattern", "expected"), [
    (r"foo.{0,3}bar", r"foo[^\n]{0,12}bar"),                 # one character may be four bytes
    (r"caf\u00e9 ok", r"caf(?:\xc3\xa9)\x20ok"),            # a non-ASCII literal as its UTF-8 bytes
    (r"\bXid\b \d+ ok", r"Xid\x20[0-9\x80-\xff]+\x20ok"),  # boundaries dropped, \d takes any digit
    (r"a[^b]c", r"a[^\x62\n]{1,4}c"),                       # a negated class: any character but b or LF
    (r"timeout.{0,80}", r"timeout"),                       # a tail that may match nothing is dropped
    (r"rank \d{1,6}", r"rank\x20[0-9\x80-\xff]"),              # a repeat at the end keeps its least count
    (r"^NVRM: (?:Xid|SXid)", r"(?:^|\r)NVRM\x3a\x20(?:Xid|SXid)"),
])
def test_rewrites(pattern: str, expected: str) -> None:
    assert to_bytes(pattern)[0] == expected


def test_constructs_without_a_byte_form_are_refused() -> None:
    for pattern in (r"foo(?=bar)", r"(a)\1", r"(?<!x)y"):
        with pytest.raises(Unsupported):
            to_bytes(pattern)
    assert to_bytes(r"(?i)cuda error")[1] is True


def test_multibyte_text_is_still_found() -> None:
    line = "NCCL WARN Call to connect returned Connexion refusée, retrying"
    assert re.search(r"returned .{1,40}, retrying", line)
    assert _byte_rx(r"returned .{1,40}, retrying").search(line.encode())
    assert _byte_rx(r"refus\w{1,3}, retrying").search(line.encode())
    assert _byte_rx(r"Connexion\s\S{1,10}\s?,").search("Connexion\u00a0refusée ,".encode())


def _real_lines() -> list[str]:
    from generator.corpus.validated import load_corpus  # noqa: PLC0415

    corpus = load_corpus(ROOT / "kb" / "entries")
    lines = {ex.line for e in corpus.entries for s in e.signatures for ex in s.examples}
    lines |= {c for e in corpus.entries for s in e.signatures for c in s.counter_examples}
    for folder in ("logs", "field/dev"):
        for path in sorted((ROOT / "tests" / "fixtures" / folder / "cases").glob("*.log")):
            lines.update(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return sorted(lines), corpus


def test_every_signature_byte_form_finds_every_line_its_pattern_finds() -> None:
    from generator.matcher.rules import compiled  # noqa: PLC0415

    lines, corpus = _real_lines()
    encoded = [line.encode() for line in lines]
    missed = []
    for entry in corpus.entries:
        for sig in entry.signatures:
            text_rx = compiled(sig.pattern, False)
            byte_rx = _byte_rx(sig.pattern)
            for line, raw in zip(lines, encoded):
                if text_rx.search(line) and not byte_rx.search(raw):
                    missed.append(f"{entry.id}/{sig.id}: {line[:100]}")
    assert len(lines) > 3000
    assert not missed, missed[:10]
