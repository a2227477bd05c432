"""Can a pattern make a backtracking engine run for a very long time? A static answer.

The matcher runs signatures with Python's ``re`` (and Pyodide's, in the browser): a pattern
that can match the same text in many ways backtracks through all of them before it fails, and
on a 64 KiB log line that is hours. This module judges a pattern on the parse tree of Python's
own parser and names each construct that lets a repeat split the text in more than one way:

- an unbounded repeat inside another (``(a+)+``);
- alternatives that can start with the same character, inside any repeat (``(a|aa)+``);
- two unbounded repeats in a row whose characters overlap (``\\d*\\d*``, ``[a-z]+[a-z]+``),
  also when only optional items sit between them;
- a repeated group whose inner repeat can swallow what starts the next round (``(.*a){20}``,
  and any inner repeat of variable width under an unbounded repeat, ``(x{1,5})+``, or under a
  counted one whose rounds could split a text more than a thousand ways, ``(x{1,5}){1,5}``);
- an unbounded repeat whose body can match nothing (``(a?)*``);
- more than two unbounded wildcards (``.*``, ``\\S+``, ``[^x]*``) in one pattern;
- lookarounds and backreferences (outside the linear-time subset RE2 runs), and repeat counts
  over 1,000 (RE2 refuses them);
- groups nested more than ``MAX_DEPTH`` deep.

Characters are tracked as sets: a ``CharSet`` is either a finite set of characters or "every
character except" a finite set. The analysis is approximate on the safe side: it may refuse
a pattern that would in fact run fast, never the other way round for these shapes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]

UNBOUNDED = C.MAXREPEAT
LARGE = 1000  # a bounded repeat over this many is treated as unbounded
RE2_MAX_COUNT = 1000  # RE2's limit on {n,m}
SPLITS = 1000  # ways a counted repeat's rounds may split a text before that counts as a risk
MAX_DEPTH = 40  # nesting deeper than this is refused outright (and cannot overflow the analysis)
TOO_DEEP = f"groups nested too deeply (more than {MAX_DEPTH} levels)"  # the risk named for such a pattern
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)

_DIGITS = frozenset("0123456789")
_SPACE = frozenset(" \t\n\r\f\v")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


class CharSet:
    """A finite set of characters, or every character except a finite set (``negated``).

    Immutable; a plain class with slots rather than a frozen dataclass: the analysis makes
    one per literal character and per union, and a frozen dataclass's ``__init__`` cost most
    of its time."""

    __slots__ = ("chars", "negated")

    def __init__(self, chars: frozenset = frozenset(), negated: bool = False) -> None:
        self.chars = chars
        self.negated = negated  # True: every character except ``chars``

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not CharSet:
            return NotImplemented
        return self.chars == other.chars and self.negated == other.negated  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.chars, self.negated))

    def __repr__(self) -> str:
        return f"CharSet(chars={self.chars!r}, negated={self.negated!r})"

    def overlaps(self, other: "CharSet") -> bool:
        if self.negated and other.negated:
            return True
        if self.negated:
            return bool(other.chars - self.chars)
        if other.negated:
            return bool(self.chars - other.chars)
        return bool(self.chars & other.chars)

    def __or__(self, other: "CharSet") -> "CharSet":
        if self.negated and other.negated:
            return CharSet(self.chars & other.chars, True)
        if self.negated:
            return CharSet(self.chars - other.chars, True)
        if other.negated:
            return CharSet(other.chars - self.chars, True)
        if other.chars <= self.chars:  # nothing new (the usual case: a letter seen before)
            return self
        if not self.chars:
            return other
        return CharSet(self.chars | other.chars)

    @property
    def broad(self) -> bool:
        return self.negated


EMPTY = CharSet()
ANY = CharSet(frozenset(), True)


_CATEGORIES = {C.CATEGORY_DIGIT: CharSet(_DIGITS), C.CATEGORY_NOT_DIGIT: CharSet(_DIGITS, True),
               C.CATEGORY_SPACE: CharSet(_SPACE), C.CATEGORY_NOT_SPACE: CharSet(_SPACE, True),
               C.CATEGORY_WORD: CharSet(_WORD), C.CATEGORY_NOT_WORD: CharSet(_WORD, True)}


def _category(cat: object) -> CharSet:
    return _CATEGORIES.get(cat, ANY)


@functools.lru_cache(maxsize=65536)  # a pattern per signature: a 5,000-entry corpus has 10,000
def parse(pattern: str) -> P.SubPattern:
    """Python's own parse tree of ``pattern`` (cached: the analysis and the prefilter's literal
    search both walk it; never mutated)."""
    return P.parse(pattern)


def _fold(ch: str, ignore_case: bool) -> frozenset:
    return frozenset({ch.lower(), ch.upper()}) if ignore_case else frozenset({ch})


@functools.lru_cache(maxsize=4096)
def _class(items: tuple, ignore_case: bool) -> CharSet:
    """The characters a ``[...]`` class matches (its parsed items are tuples: cached by value)."""
    out = EMPTY
    negate = False
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            out = out | CharSet(_fold(chr(av), ignore_case))
        elif op is C.RANGE:
            lo, hi = av
            if hi - lo > 2000:
                return ANY if not negate else EMPTY
            chars = frozenset(chr(c) for c in range(lo, hi + 1))
            if ignore_case:
                chars = frozenset(x for c in chars for x in (c.lower(), c.upper()))
            out = out | CharSet(chars)
        elif op is C.CATEGORY:
            out = out | _category(av)
    if negate:
        return CharSet(out.chars, True) if not out.negated else CharSet(frozenset())
    return out


@dataclass
class Shape:
    """What a piece of a pattern can consume: its first characters, all its characters,
    whether it can match the empty string, and the characters of unbounded repeats that can
    open it (``head``) or close it (``tail``): two pieces in a row whose tail and head overlap
    can share the text between them in many ways."""

    first: CharSet
    alphabet: CharSet
    nullable: bool
    head: CharSet = EMPTY
    tail: CharSet = EMPTY


def _items(sub: object) -> list:
    """A parsed (sub)pattern's items: its list itself (read, never changed), not a copy made
    item by item through ``SubPattern.__getitem__``."""
    return sub.data if sub.__class__ is P.SubPattern else list(sub)  # type: ignore[attr-defined]


_LITERALS: dict[tuple[int, bool], Shape] = {}  # a literal character's shape (shapes are never changed)


def _literal(code: int, ignore_case: bool) -> Shape:
    shape = _LITERALS.get((code, ignore_case))
    if shape is None:
        s = CharSet(_fold(chr(code), ignore_case))
        shape = _LITERALS[(code, ignore_case)] = Shape(s, s, False)
    return shape


def _is_unbounded(hi: int) -> bool:
    return hi is UNBOUNDED or hi > LARGE


def _flatten(items: list) -> list:
    """Plain groups inlined, and short fixed counts written out: ``(?:x?){2}`` is ``x? x?``."""
    out: list = []
    for op, av in items:
        if op is C.SUBPATTERN and not av[1] and not av[2]:
            out.extend(_flatten(_items(av[3])))
        elif op in _REPEATS and av[0] == av[1] and 1 <= av[0] <= 4:
            out.extend(_flatten(_items(av[2])) * av[0])
        else:
            out.append((op, av))
    return out


class _Analysis:
    def __init__(self, ignore_case: bool):
        self.ignore_case = ignore_case
        self.risks: list[str] = []
        self.wildcards = 0
        self.repeating = 0  # how many repeats that run more than once enclose the current item
        self.copies = 1  # how many copies of the current item the enclosing counted repeats make

    def risk(self, text: str) -> None:
        if text not in self.risks:
            self.risks.append(text)

    def sequence(self, items: list, depth: int, in_unbounded: int) -> Shape:
        """The shape of a sequence; records the risks found on the way."""
        if depth > MAX_DEPTH:
            raise RecursionError
        ic, item, literal = self.ignore_case, self.item, C.LITERAL  # a group's (?i) is undone before the next item
        shapes = [_literal(av, ic) if op is literal else item(op, av, depth + 1, in_unbounded) for op, av in items]
        open_tail = EMPTY  # tails of earlier items that text can still flow out of
        for shape in shapes:
            if shape.head is not EMPTY and open_tail.overlaps(shape.head):  # nothing overlaps EMPTY
                self.risk("two unbounded repeats in a row that can match the same characters (like \\d*\\d*)")
            open_tail = (open_tail | shape.tail) if shape.nullable else shape.tail
        # a union's value does not depend on order or repeats (and a CharSet's form follows from
        # its value), so each distinct alphabet is added once: literal shapes are shared
        alphabet = EMPTY
        for part in {id(shape.alphabet): shape.alphabet for shape in shapes}.values():
            alphabet = alphabet | part
        first, head, nullable = EMPTY, EMPTY, True
        for shape in shapes:
            first, head = first | shape.first, head | shape.head
            if not shape.nullable:
                nullable = False
                break
        tail = EMPTY
        for shape in reversed(shapes):
            tail = tail | shape.tail
            if not shape.nullable:
                break
        return Shape(first, alphabet, nullable, head, tail)

    def item(self, op: object, av: object, depth: int, in_unbounded: int) -> Shape:
        ic = self.ignore_case
        if op is C.LITERAL:
            return _literal(av, ic)  # type: ignore[arg-type]
        if op is C.NOT_LITERAL:
            s = CharSet(frozenset({chr(av)}), True)  # type: ignore[arg-type]
            return Shape(s, s, False)
        if op is C.ANY:
            return Shape(ANY, ANY, False)
        if op is C.IN:
            s = _class(tuple(av), ic)  # type: ignore[arg-type]
            return Shape(s, s, False)
        if op in (C.ASSERT, C.ASSERT_NOT):
            self.risk("a lookahead or lookbehind (not in the linear-time subset)")
            self.sequence(_items(av[1]), depth, in_unbounded)  # type: ignore[index]
            return Shape(EMPTY, EMPTY, True)
        if op in (C.GROUPREF, C.GROUPREF_EXISTS):
            self.risk("a backreference (not in the linear-time subset)")
            return Shape(ANY, ANY, True, ANY, ANY)
        if op is C.AT:
            return Shape(EMPTY, EMPTY, True)
        if op is C.SUBPATTERN:
            _g, add, _del, sub = av  # type: ignore[misc]
            saved = self.ignore_case
            if add & 2:  # an inline (?i)
                self.ignore_case = True
            shape = self.sequence(_items(sub), depth, in_unbounded)
            self.ignore_case = saved
            return shape
        if op is C.ATOMIC_GROUP:
            return self.sequence(_items(av), depth, in_unbounded)  # type: ignore[arg-type]
        if op is C.BRANCH:
            shapes = [self.sequence(_items(alt), depth, in_unbounded) for alt in av[1]]  # type: ignore[index]
            if self.repeating:
                for i, a in enumerate(shapes):
                    for b in shapes[i + 1:]:
                        if a.first.overlaps(b.first) or a.nullable or b.nullable:
                            self.risk("alternatives that can start alike inside a repeat (like (a|aa)+)")
            out = Shape(EMPTY, EMPTY, False)
            for s in shapes:
                out = Shape(out.first | s.first, out.alphabet | s.alphabet, out.nullable or s.nullable,
                            out.head | s.head, out.tail | s.tail)
            return out
        if op in _REPEATS:
            lo, hi, body = av  # type: ignore[misc]
            unbounded = _is_unbounded(hi)
            if lo > RE2_MAX_COUNT or (hi is not UNBOUNDED and hi > RE2_MAX_COUNT):
                self.risk(f"a repeat count over {RE2_MAX_COUNT} (RE2, which the command line and the exported rules use, refuses it)")
            # RE2 writes a counted repeat out as that many copies of its body: counts nested in
            # counts multiply ((?:(?:a{20}){20}){20} is 8,000 copies, past what RE2 compiles)
            copies = self.copies * max(1, lo if unbounded else hi)
            if copies > RE2_MAX_COUNT >= self.copies:
                self.risk(f"counted repeats nested so that their counts multiply past {RE2_MAX_COUNT} (RE2, which the "
                          "command line and the exported rules use, refuses the pattern)")
            if unbounded and in_unbounded:
                self.risk("an unbounded repeat inside another unbounded repeat (like (a+)+)")
            items = _items(body)
            self.repeating += hi > 1
            outer, self.copies = self.copies, copies
            inner = self.sequence(items, depth, in_unbounded + (1 if unbounded else 0))
            self.repeating -= hi > 1
            self.copies = outer
            if unbounded and inner.alphabet.broad and len(items) == 1:
                self.wildcards += 1
            if unbounded and inner.nullable:
                self.risk("a repeat whose body can match nothing (like (a?)*)")
            if hi > 1:
                self._counted(_flatten(items), inner, depth, unbounded, hi)
            nullable = lo == 0 or inner.nullable
            if unbounded:
                return Shape(inner.first, inner.alphabet, nullable, inner.alphabet, inner.alphabet)
            return Shape(inner.first, inner.alphabet, nullable, inner.head, inner.tail)
        return Shape(ANY, ANY, True, ANY, ANY)  # anything else: assume the worst shape

    def _counted(self, items: list, inner: Shape, depth: int, outer_unbounded: bool, outer_hi: int) -> None:
        """A body repeated more than once: a repeat inside it that can take more or less text
        (unbounded; of variable width when the outer repeat is unbounded, ``(x{1,5})+``, or when
        the rounds could split a text in more than ``SPLITS`` ways, ``(x{1,5}){1,5}``)
        must not be able to swallow what follows it, up to the start of the next round, or
        the rounds can split the text in many ways."""
        sub = _Analysis(self.ignore_case)
        shapes = []
        for op, av in items:
            flexible = op in _REPEATS and (_is_unbounded(av[1]) or (av[1] != av[0] and (
                outer_unbounded or (av[1] - av[0] + 1) ** min(outer_hi, 64) > SPLITS)))
            shapes.append((sub.item(op, av, depth + 1, 1), flexible))
        for i, (shape, flexible) in enumerate(shapes):
            if not flexible and shape.tail == EMPTY:
                continue
            follow = EMPTY
            for later, _ in shapes[i + 1:]:
                follow = follow | later.first
                if not later.nullable:
                    break
            else:
                follow = follow | inner.first  # the rest can be empty: the next round follows
            if (shape.alphabet if flexible else shape.tail).overlaps(follow):
                self.risk("a repeated group whose inner repeat can run into the next round (like (.*a){20} or (a{1,5})+)")
                return


@functools.lru_cache(maxsize=65536)
def risks(pattern: str) -> tuple[str, ...]:
    """Why ``pattern`` could backtrack badly or lacks RE2 support; empty when it is safe.

    A pattern nested too deeply to analyse is a risk of its own (Python's parser and compiler
    recurse too)."""
    try:
        tree = parse(pattern)
    except RecursionError:
        return (TOO_DEEP,)
    analysis = _Analysis(bool(tree.state.flags & 2))
    try:
        analysis.sequence(_items(tree), 0, 0)
    except RecursionError:
        return (TOO_DEEP,)
    if analysis.wildcards > 2:
        analysis.risk(f"{analysis.wildcards} unbounded wildcard repeats such as .* (at most 2)")
    return tuple(analysis.risks)
