"""Errors of the ``generator`` package, and the problem reports that validation collects.

Exception tree (every error the package raises on purpose derives from ``KbError``)::

    KbError              (defined in matcher/errors.py so the matcher can run alone)
    ├── InputError       a file or argument the user gave cannot be used (missing, a folder, ...)
    ├── RulesError       rules.json is missing, of another format, or fails its hash
    ├── CorpusError      the corpus has problems; carries every Problem found
    └── BuildError       a build step failed for a reason outside the corpus

A ``Problem`` is one finding with a position. It prints as ``path:line:col: CODE message``
followed by an indented one-line hint, the format editors and CI annotate from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from generator.matcher.errors import InputError, KbError, RulesError

__all__ = ["BuildError", "CODES", "CorpusError", "InputError", "KbError", "Problem", "RulesError", "display_path", "plural",
           "relative_path"]

# Each code has a short name (shown in docs) and a default hint.
CODES: dict[str, tuple[str, str]] = {
    "KB001": ("yaml-syntax", "fix the YAML syntax at this position; quote values that contain ': ' or start with a special character"),
    "KB002": ("duplicate-key", "remove one of the two keys; YAML keeps only the last one, silently"),
    "KB003": ("unknown-field", "remove the field or fix its spelling; the field reference is in docs/contributing.md"),
    "KB004": ("wrong-type", "change the value to the expected type; quote text that YAML reads as a number or a boolean"),
    "KB005": ("missing-field", "add the field; the field reference is in docs/contributing.md"),
    "KB006": ("invalid-value", "use one of the allowed values listed in docs/contributing.md"),
    "KB007": ("yaml-alias", "write the value out in full where it is needed; entries use no YAML anchors (&) or aliases (*)"),
    "KB010": ("id-mismatch", "make `id` equal to the file name without .yaml, or rename the file"),
    "KB011": ("duplicate-id", "give each entry a unique id; merge the two entries if they describe the same failure"),
    "KB012": ("unknown-relation", "name an existing entry id, or add that entry first"),
    "KB013": ("duplicate-xid", "keep one entry per Xid code; merge the two entries"),
    "KB014": ("xid-block", "Xid entries have category xid, an id of the form xid-<code> and an `xid:` block; others have none"),
    "KB015": ("duplicate-signature-id", "give each signature of the entry its own id"),
    "KB020": ("regex-invalid", "fix the regular expression; test it with python -c \"import re; re.compile(r'...')\""),
    "KB021": ("example-not-matched", "fix the pattern so it matches this real line, or move the line to another signature"),
    "KB022": ("counter-example-matched", "tighten the pattern so it no longer matches this line"),
    "KB023": ("regex-unsafe", "rewrite the pattern without nested or adjacent unbounded repeats that can backtrack"),
    "KB025": ("regex-too-deep", "flatten the pattern: a signature needs no more than a few levels of groups"),
    "KB026": ("regex-no-byte-form", "use constructs the Hyperscan byte form takes: spell a negated class out ([^ \\t,] rather than [^\\s,], [^A-Za-z0-9_] rather than [^\\w])"),
    "KB029": ("regex-no-js-form", "the site search runs patterns with JavaScript's RegExp: use constructs it reads as Python does (a leading (?i), (?:...), (?P<name>...), classes, counted repeats {n,m})"),
    "KB027": ("regex-too-common", "anchor the pattern on the product's or component's own words, copied from the example lines: an error name (ncclSystemError, CUDA_ERROR_OUT_OF_MEMORY), a function (cudaMalloc), a file (ProcessGroupNCCL.cpp) or a code (Xid 79); 'error', 'failed to' or 'warning' alone are in every log"),
    "KB028": ("regex-shared-weak-anchor", "give the pattern a required literal of its own (the product's message words, a file name, an error code), or split an alternation so that each branch has one"),
    "KB024": ("regex-no-literal", "include literal text of at least 4 characters that every match contains, e.g. the message's fixed words"),
    "KB030": ("malformed-url", "write an absolute http(s) URL such as https://docs.nvidia.com/...; percent-encode ( ) < > \" ' ` and spaces"),
    "KB050": ("shared-sentence", "say it in words specific to this failure; text shared between entries is boilerplate"),
    "KB060": ("placeholder", "replace the TODO: value with real content, or delete the optional field"),
    "KB040": ("unsafe-html", "write Markdown only: no raw HTML, attribute lists or remote images; put literal markup such as <unknown> inside `backticks`"),
}


class BuildError(KbError):
    """A build step failed for a reason outside the corpus."""


@dataclass(frozen=True, order=True)
class Problem:
    """One finding, with the position in the source file it refers to (1-based)."""

    path: str
    line: int
    col: int
    code: str
    message: str
    hint: str = ""

    def format(self) -> str:
        """One line and a hint. A file name or a key of the entry may hold control characters
        (a YAML "\\e[2J" is an escape sequence): they are written out, never sent to the terminal."""
        from generator.matcher.report import visible

        hint = self.hint or CODES.get(self.code, ("", ""))[1]
        text = visible(f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}")
        return f"{text}\n    hint: {visible(hint)}" if hint else text

    def github_annotation(self) -> str:
        """The same problem as a GitHub Actions workflow command (a line break in a file name or
        a message would start a command of its own: escaped, as are the property separators)."""
        from generator.matcher.report import visible

        message = _workflow_data(self.message)
        path = _workflow_data(self.path).replace(":", "%3A").replace(",", "%2C")  # a property value, too
        title = f"{self.code} {CODES.get(self.code, ('',))[0]}".strip()
        return f"::error file={visible(path)},line={self.line},col={self.col},title={title}::{visible(message)}"


def _workflow_data(text: str) -> str:
    """``text`` escaped for a GitHub Actions workflow command (a line break would end the command)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


class CorpusError(KbError):
    """The corpus has problems. All of them are collected before this is raised."""

    def __init__(self, problems: list[Problem], checked: int = 0):
        self.problems = sorted(set(problems))
        self.checked = checked
        files = len({p.path for p in self.problems})
        super().__init__(f"{plural(len(self.problems), 'problem')} in {plural(files, 'file')}")


def plural(count: int, noun: str) -> str:
    """'1 entry', '2 entries', '3 files'."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def relative_path(path: Path, root: Path) -> str | None:
    """``path`` below ``root`` as a '/'-separated relative path, or None when it is not below it.

    The plain absolute paths are compared first (no symlink walk: this runs for every entry
    file), then the resolved ones."""
    base = os.path.abspath(root)
    absolute = os.path.abspath(path)
    if absolute.startswith(base + os.sep):
        return absolute[len(base) + 1:].replace(os.sep, "/")
    try:
        return path.resolve().relative_to(Path(root).resolve()).as_posix()
    except (ValueError, RuntimeError, OSError):  # not below root, or a symbolic link loop
        return None


def display_path(path: Path) -> str:
    """A path as users should see it: relative to the working directory when below it."""
    shown = relative_path(path, Path.cwd())
    return shown if shown is not None else str(path)
