"""Corpus checks beyond the model: small validator classes, run over every entry.

Each validator has an ``id`` (the problem code it reports), a ``check`` run once per valid
entry, and a ``finalize`` run once over the whole corpus for cross-entry rules. They
report ``Problem``s and never raise, so one run shows every problem at once.
"""

from __future__ import annotations

import itertools
import re
from typing import Iterable, Iterator

from generator.errors import Problem
from generator.matcher import backtracking
from generator.corpus import forked, healthy, literals
from generator.corpus.anchors import anchor_input, cover_anchors, weak_shared
from generator.corpus.jsregex import browser_problem
from generator.corpus.literals import MIN_LITERAL, compile_pattern, everyday_words, long_enough, names_its_own, parse, prefilter_literals
from generator.matcher.native.bytepattern import Unsupported, to_bytes
from generator.corpus.regex_budget import SECONDS as REGEX_SECONDS
from generator.corpus.regex_budget import RegexTimeout, budget
from generator.corpus.load import LoadedFile
from generator.corpus.model import CATEGORIES, Entry
from generator.corpus.safety import find_unsafe, rendered_violations


class Validator:
    """Base class: override ``check`` and/or ``finalize``."""

    id = ""
    description = ""

    def check(self, f: LoadedFile) -> Iterable[Problem]:
        return ()

    def finalize(self, files: list[LoadedFile]) -> Iterable[Problem]:
        return ()


def _entry(f: LoadedFile) -> Entry:
    assert f.entry is not None
    return f.entry


class IdMatchesFileName(Validator):
    id = "KB010"
    description = ("The id equals the file name without .yaml; a folder named after a category holds that "
                   "category's entries.")

    def check(self, f: LoadedFile) -> Iterable[Problem]:
        e = _entry(f)
        stem = f.path.name.removesuffix(".yaml")
        if e.id != stem:
            yield f.problem(self.id, f"id '{e.id}' does not match the file name '{f.path.name}'", "id")
        folder = f.path.parent.name
        if folder in CATEGORIES and folder != e.category:  # kb new writes <category>/<id>.yaml
            yield f.problem(self.id, f"the entry is in the folder {folder}/ but its category is {e.category}", "category",
                            hint=f"move the file to {e.category}/{f.path.name}, or correct the category")


class UniqueIds(Validator):
    id = "KB011"
    description = "No two entries share an id."

    def finalize(self, files: list[LoadedFile]) -> Iterable[Problem]:
        first: dict[str, LoadedFile] = {}
        for f in files:
            e = _entry(f)
            if e.id in first:
                yield f.problem(self.id, f"id '{e.id}' is already used by {first[e.id].shown}", "id")
            else:
                first[e.id] = f


class RelationsExist(Validator):
    id = "KB012"
    description = "related, causes and caused_by name existing entries, not the entry itself."

    def __init__(self, known_ids: Iterable[str] = ()) -> None:
        # ids of files that exist but failed to load are still targets: their own problem is reported once
        self.known_ids = set(known_ids)

    def finalize(self, files: list[LoadedFile]) -> Iterable[Problem]:
        known = set(self.known_ids) | {_entry(f).id for f in files}
        for f in files:
            e = _entry(f)
            for field in ("related", "causes", "caused_by"):
                for i, target in enumerate(getattr(e, field)):
                    if target == e.id:
                        yield f.problem(self.id, f"{field}[{i}] names the entry itself", field, i,
                                        hint="remove the self-reference")
                    elif target not in known:
                        yield f.problem(self.id, f"{field}[{i}] names '{target}', which is not an entry id", field, i)


class UniqueXidCodes(Validator):
    id = "KB013"
    description = "Each Xid code has exactly one entry."

    def finalize(self, files: list[LoadedFile]) -> Iterable[Problem]:
        first: dict[int, LoadedFile] = {}
        for f in files:
            e = _entry(f)
            if e.xid is None:
                continue
            if e.xid.code in first:
                yield f.problem(self.id, f"Xid {e.xid.code} is already described by {first[e.xid.code].shown}", "xid", "code")
            else:
                first[e.xid.code] = f


class XidBlockConsistent(Validator):
    id = "KB014"
    description = "Xid entries have category xid, id xid-<code> and an xid block; other entries have none."

    def check(self, f: LoadedFile) -> Iterable[Problem]:
        e = _entry(f)
        if e.category == "xid" and e.xid is None:
            yield f.problem(self.id, "category is xid but the entry has no `xid:` block", "category")
        elif e.category != "xid" and e.xid is not None:
            yield f.problem(self.id, f"category is {e.category} but the entry has an `xid:` block", "xid", key=True)

    def finalize(self, files: list[LoadedFile]) -> Iterable[Problem]:
        # A code already owned by its proper xid-<code> entry is a duplicate (KB013), reported once there.
        owned = {_entry(f).xid.code for f in files if _entry(f).xid and _entry(f).id == f"xid-{_entry(f).xid.code}"}
        for f in files:
            e = _entry(f)
            if e.category == "xid" and e.xid is not None and e.id != f"xid-{e.xid.code}" and e.xid.code not in owned:
                yield f.problem(self.id, f"an entry for Xid {e.xid.code} must have the id 'xid-{e.xid.code}'", "id")


class UniqueSignatureIds(Validator):
    id = "KB015"
    description = "Signature ids are unique within an entry."

    def check(self, f: LoadedFile) -> Iterable[Problem]:
        seen: set[str] = set()
        for i, sig in enumerate(_entry(f).signatures):
            if sig.id in seen:
                yield f.problem(self.id, f"signature id '{sig.id}' is used twice in this entry", "signatures", i, "id")
            seen.add(sig.id)


class SignaturesWork(Validator):
    """Each pattern compiles, matches every example and no counter-example.

    A pattern that could backtrack (KB023) or nests too deeply (KB025) is never run: its
    examples wait until it is fixed. Every run has a time budget as a last guard."""

    id = "KB020"
    description = "Patterns compile (KB020), match their examples (KB021) and not their counter-examples (KB022)."

    def check(self, f: LoadedFile) -> Iterable[Problem]:
        for i, sig in enumerate(_entry(f).signatures):
            try:
                rx = compile_pattern(sig.pattern)
            except re.error as exc:
                where = f" at position {exc.pos}" if exc.pos is not None else ""
                yield f.problem("KB020", f"signature '{sig.id}': pattern does not compile: {exc.msg}{where}",
                                "signatures", i, "pattern")
                continue
            except (RecursionError, OverflowError, MemoryError):
                continue  # reported as KB025 by SignaturesLinear
            if backtracking.risks(sig.pattern):
                continue  # reported by SignaturesLinear; running it could take hours
            try:
                yield from self._run(f, i, sig, rx)
            except RegexTimeout:
                yield f.problem("KB023", f"signature '{sig.id}': pattern ran over {REGEX_SECONDS:g} s on one "
                                "of its lines; it backtracks", "signatures", i, "pattern")

    @staticmethod
    def _run(f: LoadedFile, i: int, sig, rx: re.Pattern) -> Iterator[Problem]:  # noqa: ANN001
        found = []
        with budget():
            for j, example in enumerate(sig.examples):
                if not rx.search(example.line):
                    found.append(f.problem("KB021", f"signature '{sig.id}' does not match its example: {_short(example.line)!r}",
                                           "signatures", i, "examples", j, "line"))
            for j, counter in enumerate(sig.counter_examples):
                if rx.search(counter):
                    found.append(f.problem("KB022", f"signature '{sig.id}' matches its counter-example: {_short(counter)!r}",
                                           "signatures", i, "counter_examples", j))
        yield from found


class SignaturesLinear(Validator):
    """Patterns stay in a linear-time subset and carry a literal the prefilter can look for."""

    id = "KB023"
    description = ("Patterns cannot backtrack catastrophically (KB023), contain a literal the prefilter uses (KB024), "
                   "do not nest too deeply (KB025) and have a byte form for the Hyperscan prefilter (KB026).")

    def check(self, f: LoadedFile) -> Iterable[Problem]:
        for i, sig in enumerate(_entry(f).signatures):
            try:
                parse(sig.pattern)  # the analysis needs the parse tree only (cached, unlike compiled patterns)
            except re.error:
                continue  # reported by SignaturesWork
            except (RecursionError, OverflowError, MemoryError):
                yield f.problem("KB025", f"signature '{sig.id}': pattern nests too deeply to compile",
                                "signatures", i, "pattern")
                continue
            risks = backtracking.risks(sig.pattern)
            for risk in risks:
                code = "KB025" if risk == backtracking.TOO_DEEP else "KB023"
                yield f.problem(code, f"signature '{sig.id}': pattern has {risk}", "signatures", i, "pattern")
            if backtracking.TOO_DEEP in risks:
                continue
            literals, _ = prefilter_literals(sig.pattern)
            if not literals or not all(long_enough(lit) for lit in literals):
                yield f.problem("KB024", f"signature '{sig.id}': pattern has no literal text of {MIN_LITERAL} or more "
                                f"characters that every match contains", "signatures", i, "pattern")
            try:
                to_bytes(sig.pattern)
            except Unsupported as exc:  # Hyperscan would scan for its literals only, never for the whole pattern
                yield f.problem("KB026", f"signature '{sig.id}': pattern has no byte form for the Hyperscan prefilter ({exc})",
                                "signatures", i, "pattern")


class SignaturesInBrowser(Validator):
    """Patterns run in the site search as they run in Python (``jsregex``): a construct JavaScript's
    RegExp refuses would drop the signature from the search in silence, one it reads otherwise
    would match other lines."""

    id = "KB029"
    description = "Patterns use only what the site search's JavaScript RegExp reads as Python does (KB029)."

    def check(self, f: LoadedFile) -> Iterable[Problem]:
        for i, sig in enumerate(_entry(f).signatures):
            try:
                parse(sig.pattern)
            except (re.error, RecursionError, OverflowError, MemoryError):
                continue  # reported as KB020 or KB025
            found = browser_problem(sig.pattern)
            if found is not None:
                what, how = found
                yield f.problem(self.id, f"signature '{sig.id}': the site search cannot run this pattern as Python "
                                f"does: {what}", "signatures", i, "pattern",
                                hint=f"{how}; the site search runs patterns with the browser's RegExp")


class SignaturesSpecific(Validator):
    """A pattern names something of its own, not only words every log holds.

    A literal is everyday text when every word in it is an everyday log word or an English
    function word (``literals.everyday_words``: 'error', 'Failed to ', 'NCCL INFO ', ' -> 6').
    Such a literal is common when it names at most one everyday word with nothing but spaces
    and sentence punctuation around it ('error', 'Warning: ', 'failed to '), or when more than
    ``MAX_SHARE`` of a sample of healthy log lines hold it (``healthy.share``: 'NCCL INFO ' is
    in 13 % of them). A pattern is refused (KB027) when some match could contain only common
    literals (``literals.names_its_own``): the matcher would run it on a large share of ordinary
    lines, and it would report whatever else the pattern allows."""

    id = "KB027"
    description = "Every match of a pattern holds a literal of its own, not only everyday log words (KB027)."
    MAX_SHARE = 0.01  # as tests/test_signatures.py's bound on the benchmark noise
    _BARE = re.compile(r"[A-Za-z\s:.,;!]*")  # words, spaces and sentence punctuation: no digits, brackets, quotes, paths

    def check(self, f: LoadedFile) -> Iterable[Problem]:
        for i, sig in enumerate(_entry(f).signatures):
            try:
                literals, _ = prefilter_literals(sig.pattern)
                if not literals or not all(long_enough(lit) for lit in literals):
                    continue  # reported as KB024
                ok, refused, ignore_case = names_its_own(sig.pattern, self.rare)
            except (re.error, RecursionError, OverflowError, MemoryError):
                continue  # reported as KB020 or KB025
            if ok:
                continue
            shown = ", ".join(repr(lit) for lit in refused)
            share, commonest = max((healthy.share((lit,), ignore_case), lit) for lit in refused)
            why = (f"{commonest!r} is in {share:.1%} of the validator's healthy log lines (at most {self.MAX_SHARE:.0%})"
                   if share > self.MAX_SHARE else "such words are in any log: every line holding them is a candidate")
            yield f.problem(self.id, f"signature '{sig.id}': every match may hold nothing but everyday log text "
                            f"({shown}); {why}", "signatures", i, "pattern")

    @classmethod
    def rare(cls, literal: str, ignore_case: bool) -> bool:
        """Whether a literal tells the fault from ordinary lines (see the class)."""
        words = everyday_words(literal)
        if words is None:
            return True
        if len(words) <= 1 and cls._BARE.fullmatch(literal) and any(ch.isalpha() for ch in literal):
            return False
        return healthy.share((literal,), ignore_case) <= cls.MAX_SHARE


class SignatureAnchorsRare(Validator):
    """No two signatures share a plain word as the one text the matcher's prefilter finds them by.

    The rules export anchors every signature on a literal its matches must contain
    (``anchors.cover_anchors``): a rare one may serve several signatures, but when two
    patterns hold nothing rarer than the same plain word ('EDAC', 'nouveau') that word becomes
    their shared anchor, and every log line holding it is a candidate for both. Reported at the
    second signature's pattern (the first one is named). A word of everyday log text ('error')
    is left to KB027, which refuses the pattern itself."""

    id = "KB028"
    description = "No two signatures share a plain word as their only prefilter anchor (KB028)."

    def finalize(self, files: list[LoadedFile]) -> Iterable[Problem]:
        where: list[tuple[LoadedFile, int, str]] = []
        inputs: list[dict] = []
        for f in files:
            for i, sig in enumerate(_entry(f).signatures):
                try:
                    item = anchor_input(sig.pattern)
                except (re.error, RecursionError, OverflowError, MemoryError):
                    continue  # reported as KB020 or KB025
                if item["literals"]:
                    where.append((f, i, sig.id))
                    inputs.append(item)
        for anchor in weak_shared(cover_anchors(inputs)):
            held = anchor["signatures"]
            if everyday_words(anchor["text"]) is not None:
                continue  # everyday log words ('error', 'NCCL INFO'): KB027 refuses such patterns already
            first_file, _, first_id = where[held[0]]
            for k in held[1:]:
                f, i, sig_id = where[k]
                yield f.problem(self.id, f"signature '{sig_id}': its only prefilter anchor is {anchor['text']!r}, a plain word "
                                f"that signature '{first_id}' of {_entry(first_file).id} is anchored on too: every log line "
                                "holding it becomes a candidate for both", "signatures", i, "pattern")


class SafeMarkup(Validator):
    """Every string of the entry, walked once: raw HTML (KB040) and template placeholders (KB060)."""

    id = "KB040"
    description = "No raw HTML or script-capable link in rendered text (KB040); no TODO: placeholder left (KB060)."

    # fields rendered inside code blocks or as attributes are escaped by the renderer, not checked for HTML
    _CODE_FIELDS = {"pattern", "command", "line", "counter_examples", "url", "source"}

    # Python-Markdown looks for the end of a link from every '[' it meets: 3,000 '[' that close
    # nothing in 12 KB of text took 21 s to render, and the time grows with their cube. The
    # corpus's busiest text holds 7; past these bounds a text is refused before it is rendered.
    MAX_BRACKETS = 200  # in one text
    MAX_ENTRY_BRACKETS = 1000  # in every text of the entry together

    def check(self, f: LoadedFile) -> Iterable[Problem]:
        data = _entry(f).model_dump()
        brackets = 0
        hint = "put long bracketed output (a log, a list of shapes) in a code field such as a signature example"
        for loc, text in _strings(data, (), skip=self._CODE_FIELDS):
            count = text.count("[")
            if count > self.MAX_BRACKETS:
                yield f.problem(self.id, f"{_dotted(loc)} holds {count:,} '[' (at most {self.MAX_BRACKETS} in one "
                                "text); it was not checked further", *loc, hint=hint)
                continue
            if brackets + count > self.MAX_ENTRY_BRACKETS:
                if brackets <= self.MAX_ENTRY_BRACKETS:  # said once, at the text that goes over
                    yield f.problem(self.id, f"{_dotted(loc)} and the texts after it were not checked further: the "
                                    f"entry's texts hold over {self.MAX_ENTRY_BRACKETS:,} '[' together", *loc, hint=hint)
                brackets = self.MAX_ENTRY_BRACKETS + 1
                continue
            brackets += count
            located = find_unsafe(text)
            for finding in located:
                yield f.problem_in_text(self.id, f"{_dotted(loc)} contains {finding.what}", finding.offset, *loc)
            if not located:  # what the source scan cannot see (an escaped backtick, an attribute list) the HTML shows
                for what in rendered_violations(text):
                    yield f.problem(self.id, f"{_dotted(loc)} {what} once rendered as Markdown", *loc)
        if "TODO" in f.text:  # the raw file: cheap to rule out, then located value by value
            for loc, text in _strings(data, (), skip=set()):
                if "TODO" in text:
                    yield f.problem("KB060", f"{_dotted(loc)} is still a placeholder: {_short(text, 50)!r}", *loc)


_WORD = re.compile(r"[a-z0-9]+(?:['.][a-z0-9]+)*")


class NoSharedSentences(Validator):
    """No run of 12 words appears in two entries' explanations: each says something of its own.

    The explanations are the quick answer, the root cause, the mechanism and the symptoms'
    reasons; step texts and notes may legitimately share an instruction.
    """

    id = "KB050"
    description = "Two entries never share 12 consecutive words of prose (boilerplate)."
    RUN = 12

    FIELDS = ("summary", "root_cause", "mechanism")

    @classmethod
    def _prose(cls, e: Entry) -> list[tuple[tuple[str | int, ...], str]]:
        found = [((name,), getattr(e, name)) for name in cls.FIELDS if getattr(e, name)]
        for i, s in enumerate(e.symptoms):
            found.append((("symptoms", i, "why"), s.why))
        return found

    def finalize(self, files: list[LoadedFile]) -> Iterable[Problem]:
        first: dict[str, str] = {}
        ids: set[str] = set()
        codes: set[int] = set()
        for f in files:
            e = _entry(f)
            if e.id in ids or (e.xid and e.xid.code in codes):
                continue  # a duplicate entry (KB011, KB013) repeats its twin's text: reported once there
            ids.add(e.id)
            if e.xid:
                codes.add(e.xid.code)
            reported: set[str] = set()
            for loc, text in self._prose(e):
                words = _WORD.findall(text.lower())
                if len(words) < self.RUN:
                    continue
                joined = " ".join(words)
                # start of each word in `joined`; a 12-word run is then one slice, hashed in C
                starts = [0, *itertools.accumulate(len(w) + 1 for w in words)]
                # every run claimed at once (the owners do not depend on what is reported), in C
                owners = list(map(first.setdefault, [joined[a:b - 1] for a, b in zip(starts, starts[self.RUN:])],
                                  itertools.repeat(e.id)))
                if owners.count(e.id) == len(owners):
                    continue  # the usual case: no run seen in another entry
                for i, owner in enumerate(owners):
                    if owner != e.id and owner not in reported:
                        reported.add(owner)
                        run = joined[starts[i]:starts[i + self.RUN] - 1]
                        offset = list(_WORD.finditer(text.lower()))[i].start()
                        yield f.problem_in_text(self.id, f"{_dotted(loc)} repeats 12 words from entry '{owner}': "
                                                f"'{run}'", offset, *loc)


def _strings(value: object, loc: tuple[str | int, ...], skip: set[str]) -> list[tuple[tuple[str | int, ...], str]]:
    """Every string in nested data with its location, in order, not descending into keys in ``skip``
    (collected in a list: a generator per nested value cost more than the checks of short texts)."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    _collect_strings(value, loc, skip, found)
    return found


def _collect_strings(value: object, loc: tuple[str | int, ...], skip: set[str], found: list) -> None:
    if isinstance(value, str):
        found.append((loc, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in skip:
                _collect_strings(v, loc + (k,), skip, found)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _collect_strings(v, loc + (i,), skip, found)


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


VALIDATORS: tuple[type[Validator], ...] = (
    IdMatchesFileName,
    UniqueIds,
    RelationsExist,
    UniqueXidCodes,
    XidBlockConsistent,
    UniqueSignatureIds,
    SignaturesWork,
    SignaturesLinear,
    SignaturesInBrowser,
    SignaturesSpecific,
    SignatureAnchorsRare,
    SafeMarkup,
    NoSharedSentences,
)


def run_checks(files: list[LoadedFile], parallel: bool = False) -> list[Problem]:
    """Run every validator over the files that passed the model; return all problems.

    With ``parallel`` (the site build), a forked child (``forked.Child``) checks the last
    files and runs the costliest cross-entry check while this process checks the first ones:
    the same problems in the same order, the work spread over two cores. It needs that
    ``check`` keep no state between files, which every validator here does."""
    valid = [f for f in files if f.entry is not None]
    declared = {f.path.name.removesuffix(".yaml") for f in files} | {f.declared_id for f in files if f.declared_id}
    validators = [RelationsExist(declared) if cls is RelationsExist else cls() for cls in VALIDATORS]

    def check(part: list[LoadedFile]) -> list[Problem]:
        found: list[Problem] = []
        for f in part:
            for v in validators:
                found.extend(v.check(f))
        return found

    if not (parallel and forked.worth(len(valid))):
        problems = check(valid)
        for v in validators:
            problems.extend(v.finalize(valid))
        return problems
    cut = round(len(valid) * PARALLEL_SHARE)
    late = [v for v in validators if isinstance(v, NoSharedSentences)]

    def check_late_part() -> tuple[list[Problem], dict]:
        found = check(valid[cut:])  # and the patterns' literal scans, for the rules export here
        return found, ({} if found else literals.scans([s.pattern for f in valid[cut:] for s in _entry(f).signatures]))

    with forked.Child([check_late_part, *(lambda v=v: list(v.finalize(valid)) for v in late)]) as child:
        problems = check(valid[:cut])
        found, scans = child.result(0)
        problems.extend(found)
        literals.take_scans(scans)
        for v in validators:
            problems.extend(child.result(1 + late.index(v)) if v in late else v.finalize(valid))
    return problems


# with a child (from forked.PARALLEL_FROM entries), this process takes the larger share of the
# files: the child also runs NoSharedSentences.finalize
PARALLEL_SHARE = 0.6
