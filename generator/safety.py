"""Content safety for entry text written by strangers.

Entry prose is Markdown, and Markdown passes raw HTML through. Two layers keep script out
of the built site:

1. Validation (``find_unsafe``) refuses raw HTML tags and comments outside code, and link
   targets whose scheme is not http, https or mailto (``javascript:``, ``data:``, entity-
   or whitespace-obfuscated variants included).
2. Rendering (``escape_markdown``) escapes ``<`` outside code and neutralises bad link
   targets anyway, so an entry that slipped past validation still renders inert text.

Code spans and fenced blocks are left alone by both: Markdown escapes their content itself.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")
_TAG_START = re.compile(r"<(?=[A-Za-z!?])")  # opening tags, comments, declarations
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]*)")
_REF_DEF = re.compile(r"^[ \t]{0,3}\[[^\]]+\]:[ \t]*<?(\S+)", re.MULTILINE)
_SAFE_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


@dataclass(frozen=True)
class Finding:
    """Unsafe markup found at ``offset`` (0-based character index into the text)."""

    offset: int
    what: str


def code_mask(text: str) -> list[bool]:
    """For each character, whether it sits inside a code span or a fenced code block."""
    mask = [False] * len(text)
    pos = 0
    lines = text.splitlines(keepends=True)
    fence: str | None = None
    prose_chunks: list[tuple[int, int]] = []
    for line in lines:
        start, end = pos, pos + len(line)
        pos = end
        opened = _FENCE.match(line)
        if fence is not None:
            for i in range(start, end):
                mask[i] = True
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) and not line.strip()[len(opened.group(1)):]:
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            for i in range(start, end):
                mask[i] = True
            continue
        prose_chunks.append((start, end))
    # inline code spans may run over line breaks within a paragraph; scan prose as one string
    for start, end in _merge(prose_chunks):
        chunk = text[start:end]
        i = 0
        while True:
            m = _BACKTICKS.search(chunk, i)
            if not m:
                break
            run = m.group(0)
            close = re.compile(r"(?<!`)" + run + r"(?!`)").search(chunk, m.end())
            if not close:
                i = m.end()
                continue
            for k in range(start + m.start(), start + close.end()):
                mask[k] = True
            i = close.end()
    return mask


def _merge(chunks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in chunks:
        if merged and merged[-1][1] == start:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _unsafe_target(target: str) -> bool:
    cleaned = html.unescape(target)
    cleaned = "".join(ch for ch in cleaned if not ch.isspace() and ord(ch) >= 0x20)
    m = _SCHEME.match(cleaned)
    return bool(m) and m.group(1).lower() not in _SAFE_SCHEMES


def find_unsafe(text: str) -> list[Finding]:
    """Raw HTML and unsafe link targets outside code, in order of appearance."""
    if "<" not in text and "](" not in text and "]:" not in text:
        return []
    mask = code_mask(text)
    found: list[Finding] = []
    for m in _TAG_START.finditer(text):
        if not mask[m.start()]:
            snippet = text[m.start(): m.start() + 24].split("\n")[0]
            found.append(Finding(m.start(), f"raw HTML {snippet!r}"))
    for rx in (_LINK_TARGET, _REF_DEF):
        for m in rx.finditer(text):
            if not mask[m.start()] and _unsafe_target(m.group(1)):
                found.append(Finding(m.start(1), f"link target {m.group(1)[:40]!r} (only http, https and mailto links are allowed)"))
    return sorted(found, key=lambda f: f.offset)


def escape_markdown(text: str) -> str:
    """Markdown with every ``<`` outside code escaped and unsafe link targets disabled."""
    if "<" not in text and "](" not in text and "]:" not in text:
        return text
    mask = code_mask(text)
    out: list[str] = []
    for i, ch in enumerate(text):
        out.append("&lt;" if ch == "<" and not mask[i] else ch)
    escaped = "".join(out)

    def _disable(m: re.Match[str]) -> str:
        return m.group(0).replace(m.group(1), "#unsafe-link") if _unsafe_target(m.group(1)) else m.group(0)

    escaped = _LINK_TARGET.sub(_disable, escaped)
    return _REF_DEF.sub(_disable, escaped)


def escape_text(text: str) -> str:
    """Plain text (a title, a tag) made inert for Markdown and HTML contexts."""
    out = html.escape(text, quote=True)
    for ch, entity in (("`", "&#96;"), ("*", "&#42;"), ("_", "&#95;"), ("[", "&#91;"), ("]", "&#93;"), ("|", "&#124;")):
        out = out.replace(ch, entity)
    return out


def escape_attribute(text: str) -> str:
    """Text for front matter that the theme prints unescaped into HTML attributes and titles."""
    return html.escape(text.replace("`", ""), quote=True)


def fence(content: str, lang: str = "text") -> str:
    """A fenced code block that ``content`` cannot close early, whatever backticks it holds."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(content)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{content}\n{ticks}"


def offset_to_line_col(text: str, offset: int) -> tuple[int, int]:
    """0-based character offset to 0-based (line, column)."""
    line = text.count("\n", 0, offset)
    col = offset - (text.rfind("\n", 0, offset) + 1)
    return line, col
