"""Load entry files: YAML with positions, duplicate-key detection and model validation.

Each file is composed into a node tree first (so every value keeps its line and column),
checked for duplicate keys, then constructed into plain data and validated against the
``Entry`` model. Every problem becomes a ``Problem`` with the position of the offending
node; nothing raises past this module except ``InputError`` for a root that does not exist.

libyaml's C loader is used when available: it is about ten times faster than the pure
Python one, and YAML parsing is most of the generator's own time.
"""

from __future__ import annotations

import difflib
import gc
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import yaml
from pydantic import BaseModel, ValidationError

from generator.corpus import forked
from generator.errors import CODES, InputError, Problem, display_path
from generator.corpus.model import Entry, nested_model
from generator.corpus.safety import offset_to_line_col
from generator.matcher import regular

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


class EntryLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader that keeps dates as text: `2024-01-01` must not become a date object."""

    # implicit resolvers by first character, the wildcard ones appended (the base class
    # concatenates the two lists for every scalar the C composer reports)
    _by_first: dict[str, list] = {}

    def resolve(self, kind, value, implicit):  # noqa: ANN001, ANN201 - PyYAML's resolver signature
        """The base resolver's answer, faster: no path resolvers, lists merged once."""
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in self._by_first.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP


EntryLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}
EntryLoader._by_first = {
    first: resolvers + EntryLoader.yaml_implicit_resolvers.get(None, [])
    for first, resolvers in EntryLoader.yaml_implicit_resolvers.items() if first is not None
}
assert not EntryLoader.yaml_path_resolvers, "EntryLoader.resolve assumes no path resolvers"


class _Unusual(Exception):
    """The node tree uses YAML that only the full constructor handles (alias, merge key, tag)."""


def construct(loader: EntryLoader, root: yaml.Node) -> Any:
    """Plain data from a composed node tree, in one direct pass.

    Entries are maps, lists and strings; building those directly skips most of PyYAML's
    per-node machinery. Anything else (an alias used twice, a merge key, an explicit tag,
    an unhashable key) goes to PyYAML's own constructor, so the result and the errors are
    exactly the safe loader's.
    """
    try:
        return _build(loader, root, set())
    except _Unusual:
        return loader.construct_document(root)


def _build(loader: EntryLoader, node: yaml.Node, containers: set[int]) -> Any:
    # a plain function, not a closure: a recursive closure is a reference cycle that would keep
    # every loader alive while the build runs with the garbage collector paused
    tag = node.tag
    kind = node.__class__
    if kind is yaml.ScalarNode:
        if tag == _STR:
            return node.value
        if tag.startswith("tag:yaml.org,2002:") and tag != "tag:yaml.org,2002:merge":
            return loader.construct_object(node)  # int, float, bool, null, binary...
        raise _Unusual
    if id(node) in containers:
        raise _Unusual  # an alias: the full constructor shares it (and handles recursion)
    containers.add(id(node))
    if kind is yaml.SequenceNode and tag == _SEQ:
        return [_build(loader, item, containers) for item in node.value]
    if kind is yaml.MappingNode and tag == _MAP:
        out = {}
        for key_node, value_node in node.value:
            key = _build(loader, key_node, containers)
            if key.__class__ is not str:
                raise _Unusual
            out[key] = _build(loader, value_node, containers)
        return out
    raise _Unusual


MAX_ENTRY_BYTES = 1_000_000
MAX_NESTING = 32  # deeper values are refused before construction (it recurses)
MAX_VALUES = 50_000  # values and list items of one file (the largest entry holds under 2,000)
MAX_MODEL_PROBLEMS = 100  # model errors listed per file; the rest are counted (each costs a walk of the tree)


@dataclass
class LoadedFile:
    """One entry file: where it is, its node tree, and the validated entry if it validated."""

    path: Path
    shown: str
    entry: Entry | None
    text: str = ""
    declared_id: str | None = None
    _node: yaml.Node | None = None

    @property
    def node(self) -> yaml.Node | None:
        """The YAML node tree, composed again on demand (only problem reports need it)."""
        if self._node is None and self.text:
            loader = EntryLoader(self.text)
            try:
                self._node = loader.get_single_node()
            except yaml.YAMLError:
                return None
            finally:
                loader.dispose()
        return self._node

    def __getstate__(self) -> dict:
        """Pickled (sent back by a forked loader) without the node tree: ``node`` composes it
        again from the text when a problem's position is needed."""
        return {**self.__dict__, "_node": None}

    def at(self, *loc: str | int) -> tuple[int, int]:
        """Line and column (1-based) of the value at ``loc``, or of the nearest enclosing node."""
        return position(self.node, loc)

    def key_at(self, *loc: str | int) -> tuple[int, int]:
        """Line and column of the key (rather than the value) at ``loc``."""
        return position(self.node, loc, want_key=True)

    def problem(self, code: str, message: str, *loc: str | int, hint: str = "", key: bool = False) -> Problem:
        line, col = self.key_at(*loc) if key else self.at(*loc)
        return Problem(self.shown, line, col, code, message, hint)

    def problem_in_text(self, code: str, message: str, offset: int, *loc: str | int, hint: str = "") -> Problem:
        """A problem at character ``offset`` inside the scalar value at ``loc``."""
        line, col = self.at(*loc)
        node = _node_at(self.node, loc)
        value_line, value_col = offset_to_line_col(node.value, offset) if isinstance(node, yaml.ScalarNode) else (0, offset)
        if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
            source = self.text.splitlines()
            first = line  # 1-based line of the indicator; content starts on the next line
            indent = 0
            for raw in source[first:]:
                if raw.strip():
                    indent = len(raw) - len(raw.lstrip(" "))
                    break
            return Problem(self.shown, first + 1 + value_line, indent + value_col + 1, code, message, hint)
        if value_line == 0:
            quote = 1 if isinstance(node, yaml.ScalarNode) and node.style in ("'", '"') else 0
            return Problem(self.shown, line, col + quote + value_col, code, message, hint)
        return Problem(self.shown, line + value_line, value_col + 1, code, message, hint)


def entry_files(root: Path, misnamed: list[Path] | None = None) -> list[Path]:
    """Every entry file under ``root``: ``*.yaml`` files, in a stable order; with ``misnamed``,
    the ``*.yml`` files found on the same walk are added to it (an entry saved so is not read).

    A ``root`` that is no folder is one file, whatever it is: a device, a FIFO or a dangling link
    is refused by whoever reads it (``read_entry``) with its reason, never opened blindly."""
    import errno

    try:
        root.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP or root.is_symlink():
            return [root]  # the reader says why: a link loop, or where the dangling link points
        if exc.errno != errno.ENOENT:
            raise InputError(f"{display_path(root)}: cannot be read: {exc.strerror or exc}; check its permissions") from None
        what = "file" if root.suffix in (".yaml", ".yml") else "folder"
        raise InputError(f"{display_path(root)}: no such {what}; pass an entry file or the folder that holds the "
                         "entries (default kb/entries)") from None
    if not root.is_dir():
        if not root.is_file():
            raise InputError(f"{display_path(root)}: is neither a folder nor an entry file (a device, FIFO or socket); "
                             "pass an entry file or the folder that holds the entries (default kb/entries)")
        return [root]
    if not os.access(root, os.R_OK | os.X_OK):
        raise InputError(f"{display_path(root)}: cannot read the folder: Permission denied; make it readable "
                         "(chmod a+rx) or pass another folder")
    # every path named like an entry, whatever it is: a folder, a dangling link or a FIFO named
    # *.yaml is reported by load_file rather than skipped in silence
    found = [p for p in root.rglob("*.y*ml") if not p.name.startswith(".")]
    if misnamed is not None:
        misnamed.extend(sorted(p for p in found if p.suffix == ".yml"))
    return sorted(p for p in found if p.suffix == ".yaml")


# the hint `kb validate` and `kb fmt` give for each way a path is no entry file to read
_UNUSABLE_HINTS = {
    regular.MISSING: "check the path; the file may have been removed while the entries were read",
    regular.DANGLING: "fix or remove the link",
    regular.LOOP: "replace the link with the entry file itself",
    regular.FOLDER: "rename the folder: only entry files may end in .yaml",
    regular.SPECIAL: "replace it with the entry file, or remove it",
    regular.UNREADABLE: "check the file's permissions (it must be readable, e.g. chmod a+r) and that it is a plain file",
}


def read_entry(path: Path) -> tuple[bytes | None, tuple[str, str] | None]:
    """The bytes of the entry file at ``path``, or (None, (message, hint)) saying why it cannot be one.

    Read by ``regular.read_regular``: never blocking on a FIFO named like an entry, never opening
    a device, at most ``MAX_ENTRY_BYTES`` (a file that grows meanwhile is still refused by its
    size). `kb validate` and `kb fmt` share this."""
    try:
        return regular.read_regular(path, MAX_ENTRY_BYTES), None
    except regular.Unusable as why:
        return None, _entry_unusable(why)


def _entry_unusable(why: regular.Unusable) -> tuple[str, str]:
    """The (message, hint) of an entry path that ``read_regular`` refused."""
    if why.kind in (regular.TOO_BIG, regular.GREW):
        return _too_big(why.size, grew=why.kind == regular.GREW)
    message = {regular.FOLDER: "is a folder named like an entry file",
               regular.UNREADABLE: f"cannot read the file: {why.detail}"}.get(why.kind, why.phrase)
    return message, _UNUSABLE_HINTS[why.kind]


def _too_big(size: int, grew: bool = False) -> tuple[str, str]:
    said = f"file grew past {MAX_ENTRY_BYTES:,} bytes while it was read" if grew else f"file is {size:,} bytes"
    return f"{said}; an entry is at most {MAX_ENTRY_BYTES:,}", "split the entry, or move long logs out of it"


# characters that YAML 1.1 (libyaml, PyYAML, ruamel) reads as line breaks, but that editors, diff
# and grep show inside a line: a value holding one is silently folded (the break becomes a space)
# or fails with a syntax error at a line number no editor shows. A CR alone is one of them (CR LF
# is a single break, as everywhere): vim and git diff show it as ^M inside the line.
_HIDDEN_BREAKS = {
    "\x85": ("U+0085 (NEL, next line) character",
             "it is usually an ellipsis (\u2026) of Windows-1252 text decoded as Latin-1: "
             "write ... or \u2026 instead, or a space"),
    "\u2028": ("U+2028 (line separator) character", "replace it with a space, or end the line there"),
    "\u2029": ("U+2029 (paragraph separator) character",
               "replace it with a space, or a blank line inside a block of text"),
    "\r": ("CR (carriage return) not followed by LF",
           "a terminal's progress-bar redraw or an old Mac line end: end the line with LF there "
           "(tr '\\r' '\\n' for a whole file), or delete it"),
}
_HIDDEN_BREAK = re.compile("[\x85\u2028\u2029]|\r(?!\n)")


def hidden_line_breaks(text: str, shown: str) -> list[Problem]:
    """KB001 at the first character YAML reads as a line break though editors show none, if any,
    positioned by the LF-separated lines the editor shows; the message counts the others."""
    found = _HIDDEN_BREAK.search(text)
    if found is None:
        return []
    name, hint = _HIDDEN_BREAKS[found.group()]
    line, col = offset_to_line_col(text, found.start())
    others = len(_HIDDEN_BREAK.findall(text, found.end()))
    more = f" ({others} more in this file)" if others else ""
    return [Problem(shown, line + 1, col + 1, "KB001",
                    f"{name}: YAML reads it as a line break, which editors do not show as one{more}", hint)]


def load_file(path: Path) -> tuple[LoadedFile, list[Problem]]:
    """Load and validate one entry file, collecting every problem found in it."""
    shown = display_path(path)
    loaded = LoadedFile(path, shown, None)
    raw, why = read_entry(path)
    if raw is None:
        return loaded, [Problem(shown, 1, 1, "KB001", why[0], why[1])]
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):  # what some Windows editors save: every other byte a NUL
        return loaded, [Problem(shown, 1, 1, "KB001", "file is UTF-16 text; entries are UTF-8",
                                "save the file as UTF-8 (in the editor's encoding menu, or: iconv -f UTF-16 -t UTF-8)")]
    if b"\0" in raw:
        line, col = offset_to_line_col(raw, raw.index(b"\0"))
        return loaded, [Problem(shown, line + 1, col + 1, "KB001", "file contains NUL bytes; it is not a text file",
                                "remove the NUL bytes (a binary file, or a text file saved in another encoding); "
                                "entries are UTF-8 text")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = offset_to_line_col(raw, exc.start)
        return loaded, [Problem(shown, line + 1, col + 1, "KB001", "file is not valid UTF-8", "save the file as UTF-8")]

    hidden = hidden_line_breaks(text, shown)
    if hidden:  # libyaml's positions after one would be lines off the editor's, its values changed
        return loaded, hidden
    loaded.text = text
    loader = EntryLoader(text)
    try:
        return _from_loader(loader, loaded, shown, text)
    finally:
        loader.dispose()


def _from_loader(loader: Any, loaded: LoadedFile, shown: str, text: str) -> tuple[LoadedFile, list[Problem]]:
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        return loaded, [Problem(shown, line, col, "KB001", f"YAML syntax error: {what}")]
    except yaml.YAMLError as exc:  # e.g. a reader error on a control character
        index = getattr(exc, "position", 0) or 0
        line = text.count("\n", 0, index) + 1
        col = index - (text.rfind("\n", 0, index) + 1) + 1
        reason = getattr(exc, "reason", None) or str(exc)
        return loaded, [Problem(shown, line, col, "KB001", f"YAML error: {reason}",
                                "remove control characters; entries are plain UTF-8 text")]
    loaded._node = node

    # keys that are no text (`1:`, `null:`) and tabs between tokens: reported, but the model still
    # sees the rest of the file
    later: list[Problem] = []
    problems = list(_walk_structure(node, shown, later))
    later += tab_separators(text, shown)
    if any(p.code != "KB002" for p in problems):
        return loaded, problems + later  # never construct: an alias can stand for billions of values
    problems += later
    if node is None or not isinstance(node, yaml.MappingNode):
        line, col = (node.start_mark.line + 1, node.start_mark.column + 1) if node is not None else (1, 1)
        problems.append(Problem(shown, line, col, "KB004", "an entry file must hold a mapping of fields (key: value)",
                                "start from the template: kb new ID --category C"))
        return loaded, problems
    try:
        data = construct(loader, node)
    except yaml.YAMLError as exc:  # constructor errors, e.g. an unhashable key
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problems.append(Problem(shown, line, col, "KB001", f"YAML error: {getattr(exc, 'problem', exc)}"))
        return loaded, problems
    if isinstance(data, dict) and isinstance(data.get("id"), str):
        loaded.declared_id = data["id"]
    try:
        loaded.entry = Entry.model_validate(data)
    except ValidationError as exc:
        problems.extend(_validation_problems(exc, loaded))
    if loaded.entry is not None:
        # parsed first with its warnings caught, then cached: no later parse shows one on stderr
        surrogates = list(_unsettled_patterns(loaded)) + list(_surrogate_patterns(loaded))
        if surrogates:  # every later check (and the rules' JSON, Hyperscan's byte form) would fail on it
            problems.extend(surrogates)
            loaded.entry = None
    if not problems:
        loaded._node = None  # positions are only needed to report problems; free the tree
    return loaded, problems


def structure_problems(text: str, shown: str) -> list[Problem]:
    """YAML errors, anchors used through aliases (KB007), values nested too deeply (KB001), duplicate
    keys (KB002) and keys that are no text (KB004), found in one linear pass over the composed
    nodes: what makes any later walk of the data (or another YAML library's recursive reader)
    explode or read the file otherwise, and line breaks and tabs that only some YAML readers take
    (``hidden_line_breaks``, ``tab_separators``). ``kb fmt`` checks this first."""
    hidden = hidden_line_breaks(text, shown)
    if hidden:
        return hidden
    loader = EntryLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        return [Problem(shown, line, col, "KB001", f"YAML error: {getattr(exc, 'problem', None) or exc}")]
    finally:
        loader.dispose()
    return list(_walk_structure(node, shown)) + tab_separators(text, shown)


def tab_separators(text: str, shown: str) -> list[Problem]:
    """KB001 at the first tab that stands between YAML tokens (``owner:<TAB>platform``), if any.

    libyaml, which `kb validate` reads entries with, takes such a tab as a space; the pure-Python
    readers (PyYAML without libyaml, and ruamel.yaml, which `kb fmt` writes with) refuse it. An
    entry must read alike everywhere, so validation refuses it too, where the editor shows it. A
    tab inside quoted text, a block of text or a comment is text and stays."""
    if "\t" not in text:
        return []
    try:
        for _token in yaml.scan(text, Loader=yaml.SafeLoader):  # the pure-Python scanner
            pass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is None or text[mark.index:mark.index + 1] != "\t":
            return []  # another reader's problem: libyaml composed the file, its checks have the say
        start = text.rfind("\n", 0, mark.index) + 1
        before = text[start:mark.index].strip()
        line, col = offset_to_line_col(text, mark.index)
        before = before if len(before) <= 40 else "…" + before[-39:]
        where = f"after {before!r}" if before else "at the start of the line"
        return [Problem(shown, line + 1, col + 1, "KB001", f"a tab {where} where YAML needs a space: libyaml reads it, "
                        "other YAML readers (kb fmt's among them) refuse it",
                        "replace the tab with a space; if the tab belongs to the text, quote the value "
                        "(\"a\\tb\" in double quotes)")]
    return []


def load_corpus_files(root: Path, parallel: bool = False) -> tuple[list[LoadedFile], list[Problem]]:
    """Load every file under ``root``; returns the files and all problems found.

    The cyclic garbage collector is paused meanwhile: loading allocates many small objects
    that all stay alive, and collecting repeatedly over a growing heap made loading
    non-linear in the corpus size.

    With ``parallel`` (the site build), a forked child (``forked.Child``) loads the last files
    while this process loads the first ones, and sends them back: the same files and problems
    in the same order (a file's node tree, kept for problem positions, is composed again
    from its text when asked for).
    """
    misnamed: list[Path] = []
    paths = entry_files(root, misnamed)
    if not paths:  # a mistyped root that exists (an empty folder, /proc) must not pass as a clean corpus
        raise InputError(f"{display_path(root)}: no entry files (*.yaml) under this folder; pass the folder that holds "
                         "the entries (default kb/entries)")
    # an entry saved as .yml would be neither checked nor built, and the run would say all is well
    unread = [Problem(display_path(p), 1, 1, "KB010", "entry files end in .yaml; this one is not read",
                      f"rename it to {p.stem}.yaml") for p in misnamed]
    paused = gc.isenabled()
    gc.disable()
    child = None
    try:
        cut = len(paths)
        if parallel and forked.worth(len(paths)):
            cut = round(len(paths) * PARALLEL_SHARE)
            child = forked.Child([lambda: _load_files(paths[cut:])])
        files, problems = _load_files(paths[:cut])
        if child is not None:
            more_files, more_problems = child.result(0)
            files += more_files
            problems += more_problems
    finally:
        if child is not None:
            child.close()
        if paused:
            gc.enable()
    return files, unread + problems


# with a child (from forked.PARALLEL_FROM files), this process takes the larger share, as the
# child also pickles what it loaded (about a fifth of the cost of loading it)
PARALLEL_SHARE = 0.55


def _load_files(paths: list[Path]) -> tuple[list[LoadedFile], list[Problem]]:
    files: list[LoadedFile] = []
    problems: list[Problem] = []
    for path in paths:
        loaded, found = load_file(path)
        files.append(loaded)
        problems.extend(found)
    return files, problems


# --- positions --------------------------------------------------------------------------


def _walk(node: yaml.Node | None, loc: Iterable[str | int]) -> tuple[yaml.Node | None, yaml.Node | None]:
    """Follow ``loc`` through the node tree; returns (key node, value node) of what it reaches.

    Parts of ``loc`` that the tree does not contain (a missing field, a pydantic union tag)
    are skipped, so the walk stops at the nearest enclosing node. A duplicated key resolves
    to its last occurrence, as in the constructed data.
    """
    current = node
    key_node: yaml.Node | None = None
    for part in loc:
        if isinstance(current, yaml.MappingNode) and isinstance(part, str):
            found = None
            for k, v in current.value:
                if isinstance(k, yaml.ScalarNode) and k.value == part:
                    found = (k, v)
            if found is not None:
                key_node, current = found
        elif isinstance(current, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(current.value):
            key_node, current = None, current.value[part]
    return key_node, current


def position(node: yaml.Node | None, loc: Iterable[str | int], want_key: bool = False) -> tuple[int, int]:
    """The 1-based position of the value (or its key) at ``loc``, or of the nearest enclosing node."""
    if node is None:
        return 1, 1
    key_node, current = _walk(node, loc)
    target = key_node if (want_key and key_node is not None) else current
    return target.start_mark.line + 1, target.start_mark.column + 1


def _node_at(node: yaml.Node | None, loc: Iterable[str | int]) -> yaml.Node | None:
    return _walk(node, loc)[1]


def _walk_structure(node: yaml.Node | None, shown: str, keys: list[Problem] | None = None) -> Iterable[Problem]:
    """Duplicate keys (KB002), anchors used through aliases (KB007), values nested too
    deeply (KB001) and keys that are no text (KB004: ``1:``, ``null:``, ``true:``), in one linear walk.

    With a ``keys`` list, the problems of keys that are no text go there instead (they do not
    stop the construction: the model then sees the rest of the file).

    The walk never follows a node twice: in the composed tree an alias is the very node its
    anchor names, so a second visit is an alias, and a nine-level alias bomb of 1 KB (a
    billion values once expanded) costs no more than its own text."""
    if node is None:
        return
    stack = [(node, 0)]
    seen_nodes: set[int] = set()
    aliased: set[int] = set()
    while stack:
        current, depth = stack.pop()
        if len(seen_nodes) >= MAX_VALUES:  # a 1 MB list of `1,` is 500,000 values: 650 MB once checked by the model
            yield Problem(shown, current.start_mark.line + 1, current.start_mark.column + 1, "KB001",
                          f"the file holds more than {MAX_VALUES:,} values (every value and list item counts); an entry needs a few "
                          "thousand at most", "split the entry, or move long lists out of it")
            return
        if depth > MAX_NESTING:
            yield Problem(shown, current.start_mark.line + 1, current.start_mark.column + 1, "KB001",
                          f"values nested more than {MAX_NESTING} levels deep; an entry needs a few",
                          "flatten the structure: entries hold fields, lists of steps and short mappings")
            return
        if id(current) in seen_nodes:
            if id(current) not in aliased:
                aliased.add(id(current))
                yield Problem(shown, current.start_mark.line + 1, current.start_mark.column + 1, "KB007",
                              "this value has an anchor (&name) that is used again through an alias (*name); "
                              "entries may not use anchors or aliases")
            continue
        seen_nodes.add(id(current))
        if isinstance(current, yaml.ScalarNode):
            yield from _scalar_problems(current, shown)
        elif isinstance(current, yaml.MappingNode):
            seen: dict[str, yaml.Node] = {}
            for k, v in current.value:
                if isinstance(k, yaml.ScalarNode):
                    found = list(_scalar_problems(k, shown))
                    yield from found
                    if k.tag in _NOT_TEXT and not found:
                        if keys is None:
                            yield _key_not_text(k, shown)
                        else:
                            keys.append(_key_not_text(k, shown))
                    if k.value in seen:
                        first = seen[k.value].start_mark.line + 1
                        yield Problem(shown, k.start_mark.line + 1, k.start_mark.column + 1, "KB002",
                                      f"duplicate key '{k.value}' (first defined on line {first})")
                    else:
                        seen[k.value] = k
                else:
                    if isinstance(k, (yaml.SequenceNode, yaml.MappingNode)):  # the constructor would refuse it
                        kind = "list" if isinstance(k, yaml.SequenceNode) else "mapping"
                        yield Problem(shown, k.start_mark.line + 1, k.start_mark.column + 1, "KB001",
                                      f"YAML error: found unhashable key: this key is a {kind}, and a field name is text",
                                      "write the field's name as the key; a line that starts with '? ', or a [...] "
                                      "or {...} before the ':', makes the key a list or a mapping")
                    stack.append((k, depth + 1))
                stack.append((v, depth + 1))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in current.value)


_INT = "tag:yaml.org,2002:int"
# what YAML makes of a plain key that is no text: the model names it by its value (`[1]`, `None`)
# and cannot say where it stands
_NOT_TEXT = {_INT: "a number", "tag:yaml.org,2002:float": "a number", "tag:yaml.org,2002:bool": "a boolean",
             "tag:yaml.org,2002:null": "nothing (null)"}


def _key_not_text(node: yaml.ScalarNode, shown: str) -> Problem:
    """KB004 at a mapping key that YAML reads as a number, a boolean or null."""
    written = node.value if node.value else "(empty)"
    return Problem(shown, node.start_mark.line + 1, node.start_mark.column + 1, "KB004",
                   f"key {_short(written)} is not a field name; field names are text",
                   f"YAML reads this key as {_NOT_TEXT[node.tag]}: write the field's name (summary, owner, ...) "
                   "or remove the line")
MAX_NUMBER_DIGITS = 4_000  # Python refuses to convert an integer of more than 4,300 digits to or from text
_SURROGATE = re.compile("[\ud800-\udfff]")


def _scalar_problems(node: yaml.ScalarNode, shown: str) -> Iterable[Problem]:
    """What in one scalar would crash the constructor or any writer later: a number too long to
    read (KB004) and a lone surrogate escape such as "\\ud800" (KB006), which no UTF-8 file,
    page or regular-expression engine can hold."""
    value = node.value
    if node.tag == _INT and len(value) > MAX_NUMBER_DIGITS:
        yield Problem(shown, node.start_mark.line + 1, node.start_mark.column + 1, "KB004",
                      f"a number of {len(value):,} digits; no field holds a number that long (at most {MAX_NUMBER_DIGITS:,})",
                      "write the number the field needs (an Xid code is 1 to 3 digits), or quote the value if it is text")
    bad = _SURROGATE.search(value)
    if bad:
        yield Problem(shown, node.start_mark.line + 1, node.start_mark.column + 1, "KB006",
                      f"the text holds a lone surrogate \\u{ord(bad.group()):04x} (half of a UTF-16 pair: no character)",
                      "write the character itself, or its full escape (\\U0001F600 for U+1F600); "
                      "a \\ud800-\\udfff escape on its own is not text")


_SET_SYNTAX = ("[:", "[=", "[.", "--", "&&", "~~", "||")  # what Python's re warns about inside [...]
_POSIX_CLASS = re.compile(r"\[:([A-Za-z]+):\]")


def _unsettled_patterns(loaded: LoadedFile) -> Iterable[Problem]:
    """KB020 for each pattern whose class Python's ``re`` warns about (a FutureWarning on stderr):
    a POSIX class such as ``[[:digit:]]``, which ``re`` reads as the characters ':digt' and so
    matches none of its examples, or a set operation (``--``, ``&&``, ``||``, ``~~``) that a later
    Python will read otherwise."""
    import warnings  # noqa: PLC0415

    from generator.corpus.literals import parse  # noqa: PLC0415

    for i, sig in enumerate(loaded.entry.signatures):  # type: ignore[union-attr]
        if "[" not in sig.pattern or not any(text in sig.pattern for text in _SET_SYNTAX):
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", FutureWarning)
            try:
                parse(sig.pattern)
            except (re.error, RecursionError, OverflowError, MemoryError):
                continue  # reported as KB020 or KB025 by the checks
        warned = [w for w in caught if issubclass(w.category, FutureWarning)]
        if not warned:
            continue
        posix = _POSIX_CLASS.search(sig.pattern)
        if posix:
            yield loaded.problem("KB020", f"signature '{sig.id}': pattern holds the POSIX class [:{posix.group(1)}:], "
                                 f"which Python's re does not know (it reads the characters ':{posix.group(1)}' instead)",
                                 "signatures", i, "pattern",
                                 hint="write the class out: [0-9] for [:digit:], [A-Za-z] for [:alpha:], [A-Za-z0-9] "
                                      "for [:alnum:], [ \\t] for [:blank:], \\s for [:space:]")
        else:
            yield loaded.problem("KB020", f"signature '{sig.id}': pattern holds what Python's re warns a later version "
                                 f"will read otherwise: {str(warned[0].message).lower()}", "signatures", i, "pattern",
                                 hint="escape the character inside the class: \\[, \\-, \\&, \\~ or \\|")


def _surrogate_patterns(loaded: LoadedFile) -> Iterable[Problem]:
    """KB020 for each pattern whose escapes name a lone surrogate (``\\ud800``): Python's ``re``
    takes it, but it matches no character of a UTF-8 log, and no rules file or byte form holds it."""
    from generator.corpus.literals import parse  # noqa: PLC0415 - the cached tree the later checks walk too

    for i, sig in enumerate(loaded.entry.signatures):  # type: ignore[union-attr]
        if "\\" not in sig.pattern:
            continue
        try:
            tree = parse(sig.pattern)
        except (re.error, RecursionError, OverflowError, MemoryError):
            continue  # reported as KB020 or KB025 by the checks
        code = _surrogate_in(tree)
        if code is not None:
            yield loaded.problem("KB020", f"signature '{sig.id}': pattern names a lone surrogate \\u{code:04x} (half of "
                                 "a UTF-16 pair, not a character: no log line holds it)", "signatures", i, "pattern",
                                 hint="write the character itself, or its full escape (\\U0001F600 for U+1F600); "
                                      "a \\ud800-\\udfff escape on its own matches nothing")


def _surrogate_in(tree: object) -> int | None:
    from re import _constants as c  # noqa: PLC0415

    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple) and len(item) == 2 and (item[0] is c.LITERAL or item[0] is c.NOT_LITERAL) \
                and isinstance(item[1], int) and 0xD800 <= item[1] <= 0xDFFF:
            return item[1]
        if isinstance(item, (tuple, list)):
            stack.extend(item)
        elif hasattr(item, "data"):  # a SubPattern
            stack.extend(item.data)
    return None


# --- pydantic errors to problems -----------------------------------------------------------

_TYPE_WORDS = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "model_type": "a mapping of fields",
    "model_attributes_type": "a mapping of fields",
    "dict_type": "a mapping of fields",
}
_URL_FIELDS = {"url", "source"}


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the text {_short(value)!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(entry)"


def _model_fields_at(loc: tuple[str | int, ...]) -> list[str]:
    """Field names allowed at ``loc`` (for 'did you mean' hints)."""
    model: type[BaseModel] | None = Entry
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        info = model.model_fields.get(part)
        if info is None:
            break
        model = nested_model(info.annotation)
    return list(model.model_fields) if model else []


def _validation_problems(exc: ValidationError, loaded: LoadedFile) -> list[Problem]:
    problems: list[Problem] = []
    errors = exc.errors(include_url=False)
    # A misspelt field is reported once, as unknown with a suggestion, not also as missing.
    misspelt: set[tuple[str | int, ...]] = set()
    for err in [e for e in errors if e["type"] == "extra_forbidden"][:MAX_MODEL_PROBLEMS]:
        loc = tuple(err["loc"])
        close = difflib.get_close_matches(str(loc[-1]), _model_fields_at(loc[:-1]), n=1)
        if close:
            misspelt.add(loc[:-1] + (close[0],))
    errors = [err for err in errors if not (err["type"] == "missing" and tuple(err["loc"]) in misspelt)
              and err["type"] != "invalid_key"]  # a key that is no text: reported at the key (_walk_structure)
    # A file built to hurt (50,000 unknown keys in 500 KB) would cost a 'did you mean' search and a
    # walk of its mapping per error: quadratic, minutes. The first errors are listed, the rest counted.
    if len(errors) > MAX_MODEL_PROBLEMS:
        next_loc = tuple(errors[MAX_MODEL_PROBLEMS]["loc"])
        problems.append(loaded.problem(
            "KB006", f"{len(errors) - MAX_MODEL_PROBLEMS:,} more problems in this file are not listed; the next is at "
            f"{_short(_dotted(next_loc))}", *next_loc, key=True,
            hint=f"fix the {MAX_MODEL_PROBLEMS} problems listed for this file and run kb validate again"))
        errors = errors[:MAX_MODEL_PROBLEMS]
    for err in errors:
        loc = tuple(err["loc"])
        kind = err["type"]
        where = _dotted(loc)
        if kind == "missing":
            field = loc[-1]
            parent = loc[:-1]
            problems.append(loaded.problem("KB005", f"missing required field '{field}'" + (f" in {_dotted(parent)}" if parent else ""), *parent))
        elif kind == "extra_forbidden":
            field = str(loc[-1])
            allowed = _model_fields_at(loc[:-1])
            close = difflib.get_close_matches(field, allowed, n=1)
            hint = f"did you mean '{close[0]}'?" if close else CODES["KB003"][1]
            problems.append(loaded.problem("KB003", f"unknown field '{field}'" + (f" in {_dotted(loc[:-1])}" if len(loc) > 1 else ""), *loc, hint=hint, key=True))
        elif kind in _TYPE_WORDS:
            problems.append(loaded.problem("KB004", f"{where} must be {_TYPE_WORDS[kind]}, got {_describe(err.get('input'))}", *loc))
        elif kind == "literal_error":
            allowed = err.get("ctx", {}).get("expected", "")
            value = err.get("input")
            options = [o.strip().strip("'") for o in str(allowed).replace(" or ", ", ").split(",")]
            close = difflib.get_close_matches(str(value), options, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"allowed: {allowed}"
            problems.append(loaded.problem("KB006", f"{where} must be one of {allowed}; got {_describe(value)}", *loc, hint=hint))
        elif loc and loc[-1] in _URL_FIELDS and kind in ("string_pattern_mismatch", "value_error"):
            reason = err["msg"].removeprefix("Value error, ") if kind == "value_error" else ""
            if reason.startswith("a URL may not"):  # a character that could end the link: say which, and how to write it
                message = f"{where}: {reason}: {_short(str(err.get('input')))!r}"
            else:
                message = f"{where} is not a well-formed absolute http(s) URL: {_short(str(err.get('input')))!r}"
            problems.append(loaded.problem("KB030", message, *loc))
        else:
            message = err["msg"]
            if kind == "value_error":
                message = message.removeprefix("Value error, ")
            problems.append(loaded.problem("KB006", f"{where}: {message[0].lower() + message[1:]}", *loc,
                                           hint=_value_hint(kind, loc)))
    return problems


def _value_hint(kind: str, loc: tuple[str | int, ...]) -> str:
    if kind == "too_short" and loc and loc[-1] in ("references", "examples"):
        return "add at least one item"
    if kind == "string_too_short":
        return "write some text, or remove the field if it is optional"
    id_field = ("id", "related", "causes", "caused_by")
    if kind == "string_pattern_mismatch" and any(part in id_field for part in loc[-2:]):
        return "ids are lower-case words joined by hyphens, e.g. xid-79 or cuda-out-of-memory"
    return CODES["KB006"][1]
