"""`kb fmt`: rewrite entry files into one canonical layout, keeping their comments.

Canonical means: keys in the model's field order (nested blocks too), prose as literal
block scalars, lists of ids and short words in flow style, two-space indentation with
sequences indented under their key, no line folding. Comments survive (ruamel.yaml's
round-trip loader keeps them attached to their keys).

A rewrite is only written when the data reads back identical (same values, same
comments: every comment, wherever it stands, compared as text), so formatting can never lose
or change content; a file it cannot rewrite so is left as it is and named, with the line of the
comment it would lose. The file is replaced whole (``atomic.replace_text``): a write that fails
part way leaves the entry as it was. Only regular files of at most the validator's size are
read (``load.read_entry``), never a FIFO or a device, and none is written over that size (a
literal block's indentation makes a long text longer). A ``---`` before the entry and a ``...``
after it are dropped (an entry is one document); a value a literal block cannot hold (a CR, a
control character) keeps its quotes. Whatever ``kb validate`` refuses as YAML (a tab between
tokens, a key that is no text) fmt refuses at the same line.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import LiteralScalarString

import yaml

from generator import atomic
from generator.corpus.load import MAX_ENTRY_BYTES, read_entry, structure_problems
from generator.corpus.model import PROSE_FIELDS, Entry, nested_model
from generator.corpus.safety import offset_to_line_col

FLOW_LISTS = {"tags", "affects", "related", "causes", "caused_by", "applies_to", "legacy_causes", "origin"}
BLOCK_TEXT = set(PROSE_FIELDS)  # always literal blocks; other text only when it spans lines
MULTILINE_TEXT = {"symptom", "why", "text", "treatment", "description", "command"}


@dataclass
class FormatResult:
    path: Path
    changed: bool
    error: str | None = None
    line: int | None = None  # where the error is, when it is at one place


def _yaml() -> YAML:
    yaml = YAML()
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.preserve_quotes = True  # quoting is the author's choice; layout is not
    return yaml


def _reorder(node: object, model: type[BaseModel] | None) -> object:
    if isinstance(node, CommentedMap) and model is not None:
        fields = list(model.model_fields)
        ordered = CommentedMap()
        keys = [k for k in fields if k in node] + [k for k in node if k not in fields]
        for key in keys:
            info = model.model_fields.get(key)
            ordered[key] = _reorder(node[key], nested_model(info.annotation) if info else None)
            if key in node.ca.items:
                ordered.ca.items[key] = node.ca.items[key]
            _style(ordered, key)
        ordered.ca.comment = node.ca.comment
        if getattr(node.ca, "end", None):
            ordered.ca.end = node.ca.end
        return ordered
    if isinstance(node, CommentedSeq):
        for i, item in enumerate(node):
            node[i] = _reorder(item, model)
        return node
    return node


# what a literal block cannot hold: a CR (or another character YAML reads as a line break) and
# any character YAML allows in quoted text only (escaped); such a value keeps the author's quoting
_NOT_IN_BLOCK = re.compile("[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _style(mapping: CommentedMap, key: str) -> None:
    value = mapping[key]
    if isinstance(value, str) and _NOT_IN_BLOCK.search(value):
        pass
    elif key in BLOCK_TEXT and isinstance(value, str):
        mapping[key] = LiteralScalarString(value if value.endswith("\n") else value + "\n")
    elif key in MULTILINE_TEXT and isinstance(value, str) and "\n" in value.rstrip("\n"):
        mapping[key] = LiteralScalarString(value)
    elif key in FLOW_LISTS and isinstance(value, CommentedSeq) and len(value):
        value.fa.set_flow_style()
    elif isinstance(value, CommentedSeq) and len(value):
        value.fa.set_block_style()


_START_MARKER = re.compile(r"---[ \t]*(#.*)?")
_END_MARKER = re.compile(r"\.\.\.[ \t]*(#.*)?")


def _without_document_markers(text: str) -> str:
    """``text`` without a ``---`` before its first field and a ``...`` after its last: an entry
    file is one document, and its canonical form names no markers. A comment on the marker's line
    stays, on a line of its own. A file with a directive (``%YAML``) is left as it is."""
    lines = text.splitlines(keepends=True)
    for order, marker in ((range(len(lines)), _START_MARKER), (range(len(lines) - 1, -1, -1), _END_MARKER)):
        for i in order:
            bare = lines[i].strip()
            if not bare or bare.startswith("#"):
                continue
            found = marker.fullmatch(lines[i].rstrip("\r\n"))
            if found and not any(line.startswith("%") for line in lines[:i]):
                ending = lines[i][len(lines[i].rstrip("\r\n")):]
                lines[i] = found.group(1) + ending if found.group(1) else ""
            break
    return "".join(lines)


def canonical(text: str) -> str:
    """The canonical form of one entry file's text. Raises YAMLError on bad YAML."""
    yaml = _yaml()
    data = yaml.load(_without_document_markers(text))
    if not isinstance(data, CommentedMap):
        raise YAMLError("an entry file holds a mapping of fields")
    out = io.StringIO()
    yaml.dump(_reorder(data, Entry), out)
    return out.getvalue()


def _comments(text: str) -> list[tuple[str, int]]:
    """Every comment of a YAML text with its line (1-based), in order: whole-line ones and those
    after a value, inside flow lists and mappings too. A ``#`` inside a quoted or block scalar is
    text, not a comment: what lies outside every token the YAML scanner reports is comment."""
    spans = []
    for token in _tokens(text):
        if token.end_mark.index > token.start_mark.index:
            spans.append((token.start_mark.index, token.end_mark.index))
    found = []
    pos = 0
    spans.append((len(text), len(text)))
    for start, end in spans:
        gap = text[pos:start]
        offset = 0
        while True:
            hash_at = gap.find("#", offset)
            if hash_at < 0:
                break
            line_end = gap.find("\n", hash_at)
            line_end = len(gap) if line_end < 0 else line_end
            found.append((gap[hash_at:line_end].rstrip(), text.count("\n", 0, pos + hash_at) + 1))
            offset = line_end
        pos = max(pos, end)
    return found


def _tokens(text: str) -> list:
    """The YAML tokens of ``text``, by the pure-Python scanner (its marks count characters)."""
    return list(yaml.scan(text, Loader=yaml.SafeLoader))


def _comment_place(text: str, line: int) -> str:
    """Where the comment on ``line`` (1-based) of ``text`` stands, in words, judged by the tokens
    before and after it."""
    tokens = _tokens(text)
    spans = [(t.start_mark.index, t.end_mark.index) for t in tokens]
    start = sum(len(one) for one in text.splitlines(keepends=True)[:line - 1])
    at = text.find("#", start)
    while at >= 0 and any(a <= at < b for a, b in spans):  # a '#' inside a quoted value is text
        at = text.find("#", at + 1)
    flow = 0
    before = after = None
    for token in tokens:
        if token.start_mark.index >= at:
            after = token
            break
        before = token
        if isinstance(token, (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken)):
            flow += 1
        elif isinstance(token, (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)):
            flow -= 1
    if flow > 0:
        return "inside a [...] or {...} list written over several lines"
    if isinstance(before, yaml.ValueToken) and not isinstance(after, (yaml.KeyToken, yaml.BlockEndToken,
                                                                      yaml.StreamEndToken)):
        return "between a key and its value"
    if isinstance(before, yaml.DocumentEndToken) or isinstance(after, yaml.DocumentStartToken):
        return "next to a --- or ... document marker"
    return "where it stands"


def _lost_comment(before: str, after: str) -> int | None:
    """The line in ``before`` of the first comment ``after`` does not hold (as often), or None."""
    left: dict[str, int] = {}
    for comment, _line in _comments(after):
        left[comment] = left.get(comment, 0) + 1
    for comment, line in _comments(before):
        if left.get(comment, 0):
            left[comment] -= 1
        else:
            return line
    return 0 if any(left.values()) else None


def _plain(value: object) -> object:
    """Data without formatting: block-scalar strings compared without their final newline."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return value.rstrip("\n")
    return value


def _first_difference(a: object, b: object, loc: tuple = ()) -> tuple | None:
    """The location of the first value that differs between two data trees, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return loc + (key,)
            found = _first_difference(a[key], b[key], loc + (key,))
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, loc + (i,))
            if found is not None:
                return found
        return None if len(a) == len(b) else loc + (min(len(a), len(b)),)
    return None if a == b else loc


def _dotted(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the entry"


def _yaml_line(exc: YAMLError) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line + 1 if mark is not None else None


def format_file(path: Path, check: bool) -> FormatResult:
    raw, why = read_entry(path)  # a regular file of at most the validator's size, read without blocking
    if raw is None:
        return FormatResult(path, False, f"not formatted: {why[0]}; {why[1]}")
    try:
        original = raw.decode("utf-8")
        # a byte-order mark is no part of the entry: the canonical form is UTF-8 without one
        text = original[1:] if original.startswith("\ufeff") else original
        unsafe = structure_problems(text, str(path))
        if unsafe:  # an alias bomb would make the read-back comparison below expand it
            return FormatResult(path, False, f"not formatted: YAML problem at line {unsafe[0].line} ({unsafe[0].code} "
                                             f"{unsafe[0].message}); run kb validate",
                                unsafe[0].line)
        safe = YAML(typ="safe")
        data = _plain(safe.load(text))
        formatted = canonical(text)
    except UnicodeDecodeError as exc:
        line, col = offset_to_line_col(raw, exc.start)
        return FormatResult(path, False, f"not formatted: not UTF-8 text at line {line + 1}, column {col + 1} "
                                         f"(byte 0x{raw[exc.start]:02x}); save the file as UTF-8, then run kb validate")
    except YAMLError as exc:
        line = _yaml_line(exc)
        where = f" at line {line}" if line else ""
        return FormatResult(path, False, f"not formatted: YAML problem{where} ({str(exc).splitlines()[0]}); "
                                         "run kb validate", line)
    except (RecursionError, ValueError):
        return FormatResult(path, False, "not formatted: the YAML cannot be read as an entry; run kb validate")
    if formatted == original:
        return FormatResult(path, False)
    size = len(formatted.encode("utf-8"))
    if size > MAX_ENTRY_BYTES:  # kb validate, and kb fmt itself, would then refuse the file
        return FormatResult(path, False, f"not formatted: the canonical form would be {size:,} bytes, over the "
                                         f"{MAX_ENTRY_BYTES:,}-byte limit on an entry; split the entry, or move long "
                                         "logs out of it")
    try:
        changed = _first_difference(data, _plain(safe.load(formatted)))
    except YAMLError:
        changed = ()
    if changed is None and structure_problems(formatted, str(path)):
        changed = ()  # the canonical form would not read as an entry again
    if changed is not None:
        return FormatResult(path, False, f"not formatted: the canonical form would change {_dotted(changed)} "
                                         "(please report this file)")
    lost = _lost_comment(text, formatted)
    if lost is not None:
        return FormatResult(path, False, f"not formatted: kb fmt cannot keep this comment {_comment_place(text, lost)}; "
                                         "move it onto a line of its own above the key, then run kb fmt again"
                                         if lost else "not formatted: the canonical form would change the "
                                         "comments (please report this file)", lost or None)
    if not check:
        try:
            atomic.replace_text(path, formatted)
        except OSError as exc:
            return FormatResult(path, False, f"cannot write: {exc.strerror or exc}; the file is unchanged: check "
                                             "that it and its folder are writable, and that the disk has room")
    return FormatResult(path, True)
