"""Validator classes: each reports its own problem code at the right place."""

from __future__ import annotations

import re
from pathlib import Path

from generator.corpus.checks import VALIDATORS, run_checks
from generator.corpus.load import load_file

ROOT = Path(__file__).resolve().parents[1]
BASE = Path(__file__).parent / "golden" / "validate" / "clean" / "entries" / "cuda" / "demo-failure.yaml"


def _check(tmp_path: Path, text: str) -> list:
    path = tmp_path / "demo-failure.yaml"
    path.write_text(text)
    loaded, problems = load_file(path)
    assert problems == []
    return run_checks([loaded])


def test_validators_have_ids_and_descriptions() -> None:
    for cls in VALIDATORS:
        assert cls.id.startswith("KB") and cls.description


def test_duplicate_signature_id(tmp_path: Path) -> None:
    text = BASE.read_text().replace("references:", """  - id: main
    pattern: 'other'
    examples:
      - line: "other"
        source: https://example.org/issues/2
references:""")
    found = _check(tmp_path, text)
    assert [(p.code, p.line) for p in found] == [("KB015", 18)]


def test_clean_entry_has_no_problems(tmp_path: Path) -> None:
    assert _check(tmp_path, BASE.read_text()) == []


def test_xid_block_on_non_xid_entry(tmp_path: Path) -> None:
    text = BASE.read_text().replace("references:", "xid:\n  code: 13\n  name: Graphics Engine Exception\nreferences:")
    found = _check(tmp_path, text)
    assert [p.code for p in found] == ["KB014"]


def test_text_with_thousands_of_open_brackets_is_refused_before_markdown_renders_it(tmp_path: Path) -> None:
    """Red team s24: 3,000 lines of "[a" (12 KB) in a summary took 21 s to validate (Python-Markdown
    looks for each link's end from every '['; cubic), and 150,000 of them (750 KB) never ended."""
    import time

    one = BASE.read_text().replace("  A short answer", "  " + "[a\n  " * 150_000 + "A short answer", 1)
    started = time.monotonic()
    problems = _check(tmp_path, one)
    assert time.monotonic() - started < 10
    assert [(p.code, p.message) for p in problems] == [
        ("KB040", "summary holds 150,000 '[' (at most 200 in one text); it was not checked further")]
    spread = BASE.read_text().replace("  A short answer", "  " + "[a " * 190 + "A short answer", 1).replace(
        "  The underlying fault", "  " + "[b " * 190 + "The underlying fault", 1)
    from generator.corpus.checks import SafeMarkup

    SafeMarkup.MAX_ENTRY_BRACKETS, saved = 300, SafeMarkup.MAX_ENTRY_BRACKETS
    try:
        problems = _check(tmp_path, spread)
    finally:
        SafeMarkup.MAX_ENTRY_BRACKETS = saved
    assert [p.message for p in problems] == [
        "root_cause and the texts after it were not checked further: the entry's texts hold over 300 '[' together"]


def _with_pattern(pattern: str, line: str) -> str:
    """The clean entry with its signature's pattern and example replaced."""
    text = BASE.read_text()
    text = text.replace("pattern: 'something broke at step [0-9]+'", f"pattern: '{pattern}'")
    return text.replace('- line: "ERROR something broke at step 12"', f'- line: "{line}"')


def test_a_pattern_of_everyday_words_only_is_refused_at_its_pattern(tmp_path: Path) -> None:
    """Red team s24 O1: '(?i)error' with the example "some error" was valid; KB024 asked for four
    literal characters only, and the pattern named every log line holding 'error'."""
    for pattern, line in [("(?i)error", "some error"), ("(?i)failed", "launch failed"),
                          ("(?i)cuda.*error", "CUDA error: unknown"), ("warning", "a warning"),
                          ("Warning: ", "Warning: x"), ("failed to [a-z]+", "failed to start"),
                          ("(?i)(?:error|warning)", "error"), ("NCCL INFO [a-z]+ failed", "NCCL INFO net failed"),
                          ("(?i)out of memory", "out of memory")]:
        found = _check(tmp_path, _with_pattern(pattern, line))
        assert [(p.code, p.line, p.col) for p in found] == [("KB027", 12, 14)], pattern
        assert "the product's or component's own words" in found[0].format(), pattern


def test_a_pattern_that_names_its_fault_passes_the_everyday_rule(tmp_path: Path) -> None:
    """A word of the product's own anywhere every match holds it (an identifier, an error name,
    a file, a code), or an everyday phrase rare in healthy logs, is enough."""
    for pattern, line in [("cudaMalloc failed", "cudaMalloc failed"), ("(?i)segfault", "Segfault"),
                          ("NCCL WARN", "NCCL WARN x"), ("CUDA out of memory", "CUDA out of memory"),
                          ("failed to (?:extend /dev/shm/|create shared memory file)", "failed to extend /dev/shm/x"),
                          ("(?i)error.*ProcessGroupNCCL", "error in ProcessGroupNCCL"), ("[0-9]+ Killed +python", "12 Killed   python")]:
        assert _check(tmp_path, _with_pattern(pattern, line)) == [], pattern


def test_the_everyday_rule_is_judged_on_the_healthy_sample() -> None:
    from generator.corpus.checks import SignaturesSpecific

    assert not SignaturesSpecific.rare("NCCL INFO ", False)  # two everyday words, in 13 % of healthy lines
    assert SignaturesSpecific.rare("CUDA out of memory", False)  # two everyday words, in none of them
    assert not SignaturesSpecific.rare("error", True) and not SignaturesSpecific.rare("Error: ", False)
    assert SignaturesSpecific.rare(" [nvidia", False)  # a module tag in a stack frame: punctuation of its own


def _shared_sentences_one_run_at_a_time(files: list) -> list:
    """NoSharedSentences.finalize as first written: each 12-word run claimed and judged in turn
    (the reference for the version that claims a text's runs at once)."""
    import itertools  # noqa: PLC0415

    from generator.corpus.checks import _WORD, NoSharedSentences, _dotted  # noqa: PLC0415

    found, first, ids = [], {}, set()
    for f in files:
        e = f.entry
        if e.id in ids:
            continue
        ids.add(e.id)
        reported: set[str] = set()
        for loc, text in NoSharedSentences._prose(e):
            words = _WORD.findall(text.lower())
            if len(words) < 12:
                continue
            joined = " ".join(words)
            starts = [0, *itertools.accumulate(len(w) + 1 for w in words)]
            for i in range(len(words) - 11):
                run = joined[starts[i]:starts[i + 12] - 1]
                owner = first.setdefault(run, e.id)
                if owner != e.id and owner not in reported:
                    reported.add(owner)
                    offset = list(_WORD.finditer(text.lower()))[i].start()
                    found.append(f.problem_in_text("KB050", f"{_dotted(loc)} repeats 12 words from entry '{owner}': "
                                                   f"'{run}'", offset, *loc))
    return found


def test_shared_sentences_are_found_as_one_run_at_a_time_finds_them(tmp_path: Path) -> None:
    """Entries sharing runs of 12 words with several others, in several fields, more than once:
    the same problems, in the same order, at the same places as the run-by-run loop."""
    import random  # noqa: PLC0415

    from generator.corpus.checks import NoSharedSentences  # noqa: PLC0415

    rng = random.Random(2)
    words = "the a gpu rank hangs when link memory driver fails error code timeout node so it's v1.2 x".split()
    stock = [" ".join(rng.choice(words) for _ in range(14)) for _ in range(6)]
    files = []
    for n in range(40):
        text = BASE.read_text().replace("demo-failure", f"demo-{n}")
        for field in ("A short answer that says what broke and what to do.", "The underlying fault, in one paragraph."):
            parts = [rng.choice(stock) if rng.random() < 0.3 else " ".join(rng.choice(words) for _ in range(rng.randrange(20)))
                     for _ in range(rng.randrange(1, 4))]
            text = text.replace(field, ("Shared: " + ". ".join(parts) + ".").replace("\n", " "))
        path = tmp_path / f"demo-{n}.yaml"
        path.write_text(text)
        loaded, problems = load_file(path)
        assert problems == []
        files.append(loaded)
    expected = _shared_sentences_one_run_at_a_time(files)
    assert len({p.message.split("entry '")[1] for p in expected}) > 3, "several owners are repeated"
    assert list(NoSharedSentences().finalize(files)) == expected


def _with_signatures(block: str) -> str:
    """The clean entry with its signatures replaced by ``block``."""
    text = BASE.read_text()
    start, end = text.index("signatures:\n"), text.index("references:")
    return text[:start] + "signatures:\n" + block + text[end:]


def test_two_signatures_anchored_on_the_same_plain_word_are_refused(tmp_path: Path) -> None:
    """Session 28: two nouveau signatures whose patterns held nothing rarer than 'nouveau ' (an
    alternation after it) were both anchored on that word, so every nouveau line was a candidate
    for both; only tests/test_datasets.py caught it, after the commit. KB028 names the place."""
    shared = """  - id: faults
    pattern: 'nouveau [0-9a-f:.]{5,24}: (?:gsp: mmu fault queued|channel [0-9]+ killed!)'
    examples:
      - line: "nouveau 0000:01:00.0: gsp: mmu fault queued"
        source: https://example.org/issues/1
  - id: resets
    pattern: 'nouveau [0-9a-f:.]{5,24}: (?:fifo: fault [0-9]+|engine reset failed)'
    examples:
      - line: "nouveau 0000:01:00.0: engine reset failed"
        source: https://example.org/issues/2
"""
    found = _check(tmp_path, _with_signatures(shared))
    assert [(p.code, p.line, p.col) for p in found] == [("KB028", 17, 14)]
    shown = found[0].format()
    assert "signature 'resets'" in shown and "'nouveau'" in shown and "signature 'faults' of demo-failure" in shown
    assert "a required literal of its own" in shown
    # each alternative with its own rare text after the word: no shared anchor, no problem
    split = shared.replace("(?:gsp: mmu fault queued|channel [0-9]+ killed!)", "gsp: mmu fault queued").replace(
        "(?:fifo: fault [0-9]+|engine reset failed)", "engine reset failed")
    assert _check(tmp_path, _with_signatures(split)) == []


# --- red team red31 -------------------------------------------------------------------------------

# (pattern, a line it matches in Python, what KB029 names)
_NOT_FOR_THE_BROWSER = [
    ("something broke at (?i:step) [0-9]+", "something broke at STEP 12", "a scoped flag group (?i:...) at position 19"),
    ("(?s)something broke at step [0-9]+", "something broke at step 12", "an inline flag (?s) at position 0"),
    ("(?x)something\\ broke\\ at\\ step\\ [0-9]+", "something broke at step 12", "an inline flag (?x) (verbose mode)"),
    ("something broke(?# why) at step [0-9]+", "something broke at step 12", "a comment (?#...) at position 15"),
    ("something broke at (?>step) [0-9]+", "something broke at step 12", "an atomic group (?>...) at position 19"),
    ("something broke at step [0-9]++", "something broke at step 12", "a possessive repeat ++ at position 29"),
    ("something broke at step [0-9]{1,3}+", "something broke at step 12", "a possessive repeat {1,3}+ at position 29"),
    ("something broke at step [0-9]*+", "something broke at step 12", "a possessive repeat *+"),
    ("something broke at step ?+[0-9]", "something broke at step 1", "a possessive repeat ?+"),
    ("something\\N{SPACE}broke at step", "something broke at step", "a named character \\N{...} at position 9"),
    ("something broke at step [0-9]{,3}", "something broke at step 12", "a repeat {,3} at position 29"),
    ("something broke at step []0-9]+", "something broke at step ]", "a class that opens with ']' at position 24"),
    ("something broke at step\\a", "something broke at step\a", "the escape \\a (the bell character)"),
    ("something broke\\\\Z at step", "something broke\\Z at step", "the text \\Z at position 16"),
]


def test_a_pattern_the_site_search_cannot_run_is_refused_at_its_pattern(tmp_path: Path) -> None:
    """red31 #9: `(?i:false)` in torch-cuda-not-available compiled in Python but threw in the browser's
    RegExp (Node 20, Firefox < 132, Safari), so the site search left the signature out, silently.
    KB029 refuses every construct the search's translation (kb-search.js toRegExp) cannot carry."""
    for pattern, line, what in _NOT_FOR_THE_BROWSER:
        found = _check(tmp_path, _with_pattern(pattern, line.replace("\\", "\\\\").replace("\a", "\\a")))
        codes = [(p.code, p.line, p.col) for p in found if p.code == "KB029"]
        assert codes == [("KB029", 12, 14)], (pattern, found)
        shown = next(p for p in found if p.code == "KB029").format()
        assert f"signature 'main': the site search cannot run this pattern as Python does: {what}" in shown, shown
        assert "the site search runs patterns with the browser's RegExp" in shown
        assert not [p for p in found if p.code in ("KB020", "KB021")], (pattern, found)


def test_what_the_site_search_translates_passes() -> None:
    from generator.corpus.jsregex import browser_problem

    for pattern in ("(?i)something broke", "(?P<step>step) [0-9]+\\Z", "\\Astep [0-9]{2,3}", "a{} {x [a\\]] \\++ a+? x{0,3}",
                    "(?:a|b)+c", "[[(]x", "\\(?step", "x\\u00e9"):
        assert browser_problem(pattern) is None, pattern


def test_kb029_agrees_with_the_browser_translation() -> None:
    """Each refused pattern fails to compile or matches otherwise in Node's RegExp through kb-search.js's
    own toRegExp; each accepted one compiles and matches its line alike."""
    import json
    import shutil
    import subprocess
    import warnings

    import pytest

    from generator.corpus.jsregex import browser_problem

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = ROOT / "docs" / "javascripts" / "kb-search.js"
    runner = ("const fs=require('fs');global.window={kbDom:{el:()=>({})}};global.document={addEventListener(){},"
              "querySelector(){return null},querySelectorAll(){return []}};"
              f"eval(fs.readFileSync({json.dumps(str(script))},'utf8'));"
              "for (const [p,l] of JSON.parse(fs.readFileSync(0,'utf8'))) {const r=window.kbSearch.toRegExp(p, "
              "p.startsWith('(?i)')); console.log(JSON.stringify(r ? r.test(l) : null));}")
    accepted = [("(?i)STEP [0-9]+", "step 12"), ("(?P<s>step) [0-9]+\\Z", "step 12"), ("\\Astep", "step"),
                ("a{} x", "a{} x"), ("[a\\]]+x", "]]x"), ("\\++", "++"), ("x{0,3}y", "xxy"), ("x{2", "x{2")]
    cases = [(p, line) for p, line, _ in _NOT_FOR_THE_BROWSER] + accepted
    result = subprocess.run([node, "-e", runner], input=json.dumps(cases), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for (pattern, line), js in zip(cases, map(json.loads, result.stdout.splitlines())):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            python = bool(re.search(pattern, line))
        assert python
        assert (js == python) == (browser_problem(pattern) is None), (pattern, line, js)


def test_an_entry_in_another_categorys_folder_is_kb010(tmp_path: Path) -> None:
    """red31 #17: `category: cuda` stored under fabric/ validated; kb new writes <category>/<id>.yaml."""
    folder = tmp_path / "fabric"
    folder.mkdir()
    found = _check(folder, BASE.read_text())
    assert [(p.code, p.line, p.col) for p in found] == [("KB010", 3, 11)]
    assert found[0].message == "the entry is in the folder fabric/ but its category is cuda"
    assert "move the file to cuda/demo-failure.yaml, or correct the category" in found[0].format()
    assert _check(tmp_path, BASE.read_text()) == [], "a folder that names no category is no category's"
