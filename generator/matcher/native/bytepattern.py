"""Rewrite a signature's Python pattern into a byte pattern that matches at least its lines.

The engines that scan raw bytes (Hyperscan here) read a log as bytes, not characters, while the
matcher's patterns are Python ``re`` patterns run on decoded text. Three things differ:

- one character may be several bytes (UTF-8 uses up to four), so ``.``, a negated class or
  ``\\w`` that takes one character may need up to four bytes, and ``.{0,40}`` up to 160;
- ``\\w``, ``\\s`` and ``\\d`` also take non-ASCII letters, spaces and digits in Python;
- ``\\b`` and ``\\B`` judge word characters by Unicode in Python, by ASCII on bytes.

The rewrite makes every such item a little wider (any byte >= 0x80 may be part of a character
of the class; repeat bounds of a one-character item are multiplied by four; word boundaries are
dropped), so a line the Python pattern matches is always found. The result is a prefilter: the
matcher still runs the real pattern on each line found, so reports do not change (the engines'
parity test holds it). What is wider costs only a few extra candidate lines.

One difference is left on purpose: with ``(?i)`` Python also folds the Kelvin sign onto ``k``,
the long s onto ``s`` and the dotted/dotless i onto ``i``; the byte patterns are case-insensitive
for ASCII only, so such a spelling of a signature's words would be missed by this engine.

Trailing items that may match nothing are dropped and a repeat left at the end keeps only its
least count (a line that has the rest has the whole), so a scan reports one match end where
``foo.{0,80}`` or ``foo\\S{1,40}`` would report dozens.
"""

from __future__ import annotations

from re import _constants as C  # type: ignore[attr-defined]

from ..backtracking import parse

WIDE = 4  # the most bytes one character takes in UTF-8
HIGH = r"\x80-\xff"
_ASCII_SPACE = "\t\n\x0b\x0c\r \x1c\x1d\x1e\x1f"  # what Python's \s takes below 0x80
# possessive repeats and atomic groups exist from Python 3.11 on
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None))
_ATOMIC_GROUP = getattr(C, "ATOMIC_GROUP", None)


class Unsupported(ValueError):
    """A construct the rewrite does not handle (lookarounds, backreferences): use literals instead."""


def _byte(c: int) -> str:
    ch = chr(c)
    return ch if ch.isascii() and ch.isalnum() else f"\\x{c:02x}"


def _literal(c: int) -> str:
    if c < 0x80:
        return _byte(c)
    return "(?:" + "".join(f"\\x{b:02x}" for b in chr(c).encode("utf-8")) + ")"


def escape(text: str) -> str:
    """``text`` as a byte pattern that matches exactly its UTF-8 bytes."""
    return "".join(_literal(ord(ch)) for ch in text)


def _class_members(c: int) -> str:
    """One ASCII code point as a member of a byte class."""
    return f"\\x{c:02x}"


def _category(cat) -> tuple[str, bool]:  # noqa: ANN001 - an sre category constant
    """A \\d \\s \\w (or negation) as byte-class members, and whether it takes non-ASCII characters."""
    if cat is C.CATEGORY_DIGIT:
        return "0-9" + HIGH, True
    if cat is C.CATEGORY_SPACE:
        return "".join(_class_members(ord(ch)) for ch in _ASCII_SPACE) + HIGH, True
    if cat is C.CATEGORY_WORD:
        return "0-9A-Za-z_" + HIGH, True
    if cat is C.CATEGORY_NOT_DIGIT:
        return "\\x00-\\x2f\\x3a-\\xff", True
    if cat is C.CATEGORY_NOT_SPACE:
        return "\\x00-\\x08\\x0e-\\x1b\\x21-\\xff", True
    if cat is C.CATEGORY_NOT_WORD:
        return "\\x00-\\x2f\\x3a-\\x40\\x5b-\\x5e\\x60\\x7b-\\xff", True
    raise Unsupported(f"category {cat}")


def _class(items: list) -> tuple[str, bool]:
    """A character class as a byte class, and whether one of its characters may take several bytes."""
    negate = bool(items) and items[0][0] is C.NEGATE
    members: list[str] = []
    wide = False
    for op, av in items[1:] if negate else items:
        if op is C.LITERAL:
            if av < 0x80:
                members.append(_class_members(av))
            elif not negate:
                wide = True  # a non-ASCII member: any of its bytes
        elif op is C.RANGE:
            lo, hi = av
            if lo < 0x80:
                members.append(f"{_class_members(lo)}-{_class_members(min(hi, 0x7f))}")
            if hi >= 0x80 and not negate:
                wide = True
        elif op is C.CATEGORY:
            if negate:
                raise Unsupported("a category inside a negated class")
            text, takes_high = _category(av)
            members.append(text)
            wide = wide or takes_high
        else:
            raise Unsupported(f"class item {op}")
    if negate:  # any character outside the ASCII members: every high byte too, never a newline
        return "[^" + "".join(members) + "\\n]", True
    if wide and not any(m.endswith(HIGH) or m.endswith("\\xff") for m in members):
        members.append(HIGH)
    return "[" + "".join(members) + "]", wide


def _one_char(op, av) -> tuple[str, bool] | None:  # noqa: ANN001
    """An item that takes exactly one character: its byte form and whether that may be several bytes."""
    if op is C.ANY:
        return "[^\\n]", True
    if op is C.NOT_LITERAL:
        return ("[^" + _class_members(av) + "\\n]") if av < 0x80 else "[^\\n]", True
    if op is C.IN:
        return _class(av)
    return None


def _nullable(op, av) -> bool:  # noqa: ANN001
    """Whether an item may match the empty string (so it can be dropped from the end)."""
    if op in _REPEATS:
        return av[0] == 0 or _seq_nullable(av[2])
    if op is C.AT:
        return True
    if op is C.SUBPATTERN:
        return _seq_nullable(av[-1])
    if op is _ATOMIC_GROUP:
        return _seq_nullable(av)
    if op is C.BRANCH:
        return any(_seq_nullable(alt) for alt in av[1])
    return False


def _seq_nullable(seq) -> bool:  # noqa: ANN001
    return all(_nullable(op, av) for op, av in seq)


def _seq(seq) -> str:  # noqa: ANN001
    return "".join(_item(op, av) for op, av in seq)


def _item(op, av) -> str:  # noqa: ANN001, PLR0911
    if op is C.LITERAL:
        return _literal(av)
    single = _one_char(op, av)
    if single is not None:
        text, wide = single
        return text + ("{1,%d}" % WIDE if wide else "")
    if op in _REPEATS:
        lo, hi, body = av
        inner = list(body)
        if len(inner) == 1 and _one_char(*inner[0]) is not None:
            text, wide = _one_char(*inner[0])
            if wide and hi is not C.MAXREPEAT:
                hi = hi * WIDE
        else:
            text = "(?:" + _seq(inner) + ")"
        if hi is C.MAXREPEAT:
            return text + ("*" if lo == 0 else "+" if lo == 1 else "{%d,}" % lo)
        return text + ("{%d}" % lo if lo == hi else "{%d,%d}" % (lo, hi))
    if op is C.SUBPATTERN:
        _group, add_flags, del_flags, body = av
        if del_flags & C.SRE_FLAG_IGNORECASE:
            raise Unsupported("(?-i:...) inside a case-insensitive pattern")
        return ("(?i:" if add_flags & C.SRE_FLAG_IGNORECASE else "(?:") + _seq(body) + ")"
    if op is _ATOMIC_GROUP:
        return "(?:" + _seq(av) + ")"
    if op is C.BRANCH:
        return "(?:" + "|".join(_seq(alt) for alt in av[1]) + ")"
    if op is C.AT:
        if av in (C.AT_BEGINNING, C.AT_BEGINNING_STRING):
            return "(?:^|\\r)"  # the matcher also splits a line at bare CRs (progress bars)
        if av in (C.AT_END, C.AT_END_STRING):
            return "(?:$|\\r)"
        if av in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
            return ""  # judged by Unicode in Python: dropping it only widens
        raise Unsupported(f"anchor {av}")
    raise Unsupported(f"{op}")


def to_bytes(pattern: str) -> tuple[str, bool]:
    """The byte pattern for ``pattern`` and whether it is case-insensitive as a whole.

    Raises Unsupported for constructs without a byte form; the caller then prefilters on the
    signature's literals.
    """
    tree = parse(pattern)  # the parse tree the validator's analyses walked already (cached, never mutated)
    ignore_case = bool(tree.state.flags & C.SRE_FLAG_IGNORECASE)
    items = list(tree)
    while items and _nullable(*items[-1]):
        items.pop()
    if not items:
        raise Unsupported("nothing is required")
    return _seq(items[:-1]) + _tail(*items[-1]), ignore_case


def _tail(op, av) -> str:  # noqa: ANN001
    """The last item, as short as a superset allows: one match end instead of dozens."""
    single = _one_char(op, av)
    if single is not None:
        return single[0]  # one character: its first byte is enough
    if op in _REPEATS and av[0] >= 1:
        lo, _hi, body = av
        inner = list(body)
        if len(inner) == 1 and _one_char(*inner[0]) is not None:
            text = _one_char(*inner[0])[0]  # lo characters hold at least lo bytes
        else:
            text = "(?:" + _seq(inner) + ")"
        return text + ("" if lo == 1 else "{%d}" % lo)
    return _item(op, av)
