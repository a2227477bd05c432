"""`kb fmt`: rewrite entry files into one canonical layout, keeping their comments.

Canonical means: keys in the model's field order (nested blocks too), prose as literal
block scalars, lists of ids and short words in flow style, two-space indentation with
sequences indented under their key, no line folding. Comments survive (ruamel.yaml's
round-trip loader keeps them attached to their keys).

A rewrite is only written when the data reads back identical (same values, same
comments), so formatting can never lose or change content.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import LiteralScalarString

from generator.corpus.load import structure_problems
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


def _style(mapping: CommentedMap, key: str) -> None:
    value = mapping[key]
    if key in BLOCK_TEXT and isinstance(value, str):
        mapping[key] = LiteralScalarString(value if value.endswith("\n") else value + "\n")
    elif key in MULTILINE_TEXT and isinstance(value, str) and "\n" in value.rstrip("\n"):
        mapping[key] = LiteralScalarString(value)
    elif key in FLOW_LISTS and isinstance(value, CommentedSeq) and len(value):
        value.fa.set_flow_style()
    elif isinstance(value, CommentedSeq) and len(value):
        value.fa.set_block_style()


def canonical(text: str) -> str:
    """The canonical form of one entry file's text. Raises YAMLError on bad YAML."""
    yaml = _yaml()
    data = yaml.load(text)
    if not isinstance(data, CommentedMap):
        raise YAMLError("an entry file holds a mapping of fields")
    out = io.StringIO()
    yaml.dump(_reorder(data, Entry), out)
    return out.getvalue()


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def _plain(value: object) -> object:
    """Data without formatting: block-scalar strings compared without their final newline."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return value.rstrip("\n")
    return value


def format_file(path: Path, check: bool) -> FormatResult:
    try:
        raw = path.read_bytes()
        original = raw.decode("utf-8")
        # a byte-order mark is no part of the entry: the canonical form is UTF-8 without one
        text = original[1:] if original.startswith("\ufeff") else original
        unsafe = structure_problems(text, str(path))
        if unsafe:  # an alias bomb would make the read-back comparison below expand it
            return FormatResult(path, False, f"not formatted: YAML problem at line {unsafe[0].line} "
                                             f"({unsafe[0].message}); run kb validate")
        formatted = canonical(text)
    except OSError as exc:
        return FormatResult(path, False, f"cannot read: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        line, col = offset_to_line_col(raw, exc.start)
        return FormatResult(path, False, f"not formatted: not UTF-8 text at line {line + 1}, column {col + 1} "
                                         f"(byte 0x{raw[exc.start]:02x}); save the file as UTF-8, then run kb validate")
    except YAMLError as exc:
        return FormatResult(path, False, f"not formatted: YAML problem ({str(exc).splitlines()[0]}); run kb validate")
    except RecursionError:
        return FormatResult(path, False, "not formatted: the YAML nests too deeply to read; run kb validate")
    if formatted == original:
        return FormatResult(path, False)
    safe = YAML(typ="safe")
    try:
        same = _plain(safe.load(formatted)) == _plain(safe.load(text))
    except YAMLError:
        same = False
    if not same or sorted(_comments(formatted)) != sorted(_comments(text)):
        return FormatResult(path, False, "not formatted: the canonical form would change content or comments "
                                         "(please report this file)")
    if not check:
        path.write_text(formatted, encoding="utf-8")
    return FormatResult(path, True)
