"""Content safety for entry text written by strangers.

Entry prose is Markdown, and Markdown passes raw HTML through. Three layers keep script out
of the built site, none of which leans on the Content-Security-Policy:

1. Validation renders each prose value with Python-Markdown, as the site will, and checks
   the HTML against an allow-list of tags and attributes (``rendered_violations``): no raw
   HTML, links only to http(s), mailto or pages of the site, images only from the site, no
   attributes beyond the few formatting ones. ``find_unsafe`` points at the offending spot
   in the source when it can (raw HTML outside code, a bad link target).
2. Rendering (``escape_markdown``) escapes ``<`` outside code, neutralises bad link targets,
   remote images and attribute lists (``{: onclick=...}``: attr_list is off for entry text),
   so an entry that slipped past validation still renders inert text.
3. The build checks every page's HTML as MkDocs writes it (``generator.site.page_guard``).

Code spans and fenced blocks are left alone: Markdown escapes their content itself. A code
span is what Python-Markdown takes for one: it may cross lines but not paragraphs or list
items, and an escaped backtick (``\\```) does not open one.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Iterator

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")
_TAG_START = re.compile(r"<(?=[A-Za-z!?])")  # opening tags, comments, declarations
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]*)")
# a reference definition also counts inside a quote or a list item ("> [x]: ...", "- [x]: ..."), at any
# indent, and its target may stand on the next line ("[x]:\njavascript:..."). Its label holds no
# bracket (as Python-Markdown reads it): a label allowed to hold '[' ran from every line's '[' to
# the end of the text, and 150,000 lines of "[a" held validation for minutes.
_REF_DEF = re.compile(r"^[ \t]*(?:(?:>|[-*+]|\d{1,9}[.)])[ \t]*)*\[[^\[\]]*\]:[ \t]*(?:\n[ \t]*(?:>[ \t]*)*)?<?(\S+)",
                      re.MULTILINE)
_SAFE_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


@dataclass(frozen=True)
class Finding:
    """Unsafe markup found at ``offset`` (0-based character index into the text)."""

    offset: int
    what: str


_BLOCK_START = re.compile(r"^[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|#{1,6}[ \t]|>|\|)")


def code_mask(text: str) -> list[bool]:
    """For each character, whether it sits inside a code span or a fenced code block."""
    mask = [False] * len(text)
    pos = 0
    fence: str | None = None
    block: tuple[int, int] | None = None  # the lines of the current paragraph: a code span may cross them

    def close_block() -> None:
        if block is not None and "`" in text[block[0]:block[1]]:
            for a, b in _code_spans(text[block[0]:block[1]]):
                mask[block[0] + a:block[0] + b] = [True] * (b - a)

    for line in text.splitlines(keepends=True):
        start, end = pos, pos + len(line)
        pos = end
        opened = _FENCE.match(line)
        if fence is not None:
            mask[start:end] = [True] * (end - start)
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) and not line.strip()[len(opened.group(1)):]:
                fence = None
            continue
        if opened or not line.strip() or _BLOCK_START.match(line):
            close_block()  # a fence, a blank line or a new list item, heading or quote ends a paragraph
            block = None
        if opened:
            fence = opened.group(1)
            mask[start:end] = [True] * (end - start)
            continue
        if line.strip():
            block = (block[0], end) if block is not None else (start, end)
    close_block()
    return mask


def _code_spans(line: str) -> Iterator[tuple[int, int]]:
    """Code spans of one paragraph as Python-Markdown finds them: a run of backticks not
    escaped by a backslash, closed by a run of the same length in the same paragraph."""
    i = 0
    while True:
        m = _BACKTICKS.search(line, i)
        if not m:
            return
        j = m.start()
        while j > 0 and line[j - 1] == "\\":  # count the backslashes right before the run
            j -= 1
        if (m.start() - j) % 2:  # an escaped backtick is a literal one; the rest of the run may open a span
            i = m.start() + 1
            continue
        run = m.group(0)
        close = re.compile(r"(?<!`)" + run + r"(?!`)").search(line, m.end())
        if not close:
            i = m.end()
            continue
        yield m.start(), close.end()
        i = close.end()


def _unsafe_target(target: str) -> bool:
    cleaned = html.unescape(target)
    cleaned = "".join(ch for ch in cleaned if not ch.isspace() and ord(ch) >= 0x20)
    m = _SCHEME.match(cleaned)
    return bool(m) and m.group(1).lower() not in _SAFE_SCHEMES


_ATTR_LIST = re.compile(r"\{\s*(?::|[.#][A-Za-z]|[^}\n]*=)[^}\n]*\}")  # what _attr_lists finds, as a pattern


def _attr_lists(text: str) -> Iterator[tuple[int, int]]:
    """Where ``_ATTR_LIST`` matches (start, end), found in linear time.

    The pattern itself backtracks: from each '{' its two ``[^}\n]*`` split the rest of the line
    at every '=', so 6 KB of '{a=' took a minute and 60 KB would take a day. Here each '{' costs
    a few look-ups: the next '}', the next line break and the last '=' before that '}'."""
    import bisect

    closes = [m.start() for m in re.finditer(r"\}", text)]
    breaks = [m.start() for m in re.finditer(r"\n", text)]
    equals = [m.start() for m in re.finditer("=", text)]
    done = 0
    for m in re.finditer(r"\{", text):
        start = m.start()
        if start < done:
            continue
        j = start + 1
        while j < len(text) and text[j].isspace():  # \s* (may run over line breaks)
            j += 1
        k = bisect.bisect_left(closes, j)
        if k == len(closes):
            break  # no '}' after this '{': none after any later one either
        close = closes[k]
        n = bisect.bisect_left(breaks, j)
        if n < len(breaks) and breaks[n] < close:
            continue  # the line ends first
        head = text[j:j + 2]
        e = bisect.bisect_left(equals, j)
        if head[:1] == ":" or (head[:1] in (".", "#") and head[1:2].isascii() and head[1:2].isalpha()) or \
                (e < len(equals) and equals[e] < close):
            done = close + 1
            yield start, done


def find_unsafe(text: str) -> list[Finding]:
    """Raw HTML, unsafe link targets, remote images and attribute lists outside code, in order."""
    if "<" not in text and "](" not in text and "]:" not in text and "{" not in text:
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
    for m in _IMAGE.finditer(text):
        if not mask[m.start()] and _is_remote(m.group(1)):
            found.append(Finding(m.start(), f"an image from {m.group(1)[:40]!r} (images only from this site)"))
    for start, end in _attr_lists(text):
        if not mask[start]:
            found.append(Finding(start, f"an attribute list {text[start:end][:40]!r} (attribute lists are off for entry text)"))
    return sorted(found, key=lambda f: f.offset)


def escape_markdown(text: str) -> str:
    """Markdown with every ``<`` outside code escaped, unsafe link targets disabled, remote
    images turned into plain text and attribute lists (``{: ...}``) made literal."""
    if "<" not in text and "](" not in text and "]:" not in text and "{" not in text:
        return text
    mask = code_mask(text)
    out: list[str] = []
    for i, ch in enumerate(text):
        if mask[i]:
            out.append(ch)
        elif ch == "<":
            out.append("&lt;")
        elif ch == "{":
            out.append("&#123;")  # attr_list reads only a literal brace
        elif ch == "!" and text.startswith("[", i + 1) and _remote_image_at(text, i):
            out.append("&#33;")  # the link stays a link; the image is not loaded
        else:
            out.append(ch)
    escaped = "".join(out)

    def _disable(m: re.Match[str]) -> str:
        return m.group(0).replace(m.group(1), "#unsafe-link") if _unsafe_target(m.group(1)) else m.group(0)

    def _disable_definition(m: re.Match[str]) -> str:
        if not _unsafe_target(m.group(1)):
            return m.group(0)
        # a target alone on its line would read '#unsafe-link' as a heading, and the definition would stand
        safe = "./#unsafe-link" if "\n" in m.string[m.start(): m.start(1)] else "#unsafe-link"
        return m.group(0)[: m.start(1) - m.start()] + safe + m.group(0)[m.end(1) - m.start():]

    escaped = _LINK_TARGET.sub(_disable, escaped)
    return _REF_DEF.sub(_disable_definition, escaped)


_IMAGE = re.compile(r"!\[[^\]\n]*\]\(\s*<?([^)\s>]*)")


def _remote_image_at(text: str, i: int) -> bool:
    m = _IMAGE.match(text, i)
    return not m or _is_remote(m.group(1))  # a reference-style image is judged remote too


def _is_remote(target: str) -> bool:
    cleaned = html.unescape(target).strip()
    return bool(_SCHEME.match(cleaned)) or cleaned.startswith("//") or cleaned.startswith("\\\\")


# ---- what the rendered HTML may contain ------------------------------------------------

ALLOWED_TAGS = frozenset({
    "p", "br", "hr", "em", "strong", "b", "i", "code", "pre", "kbd", "a", "ul", "ol", "li", "blockquote",
    "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "del", "sup", "sub", "span",
    "div", "details", "summary", "img", "dl", "dt", "dd", "abbr",
})
_ALLOWED_ATTRS = {
    "a": {"href", "title"}, "img": {"src", "alt", "title"}, "code": {"class"}, "span": {"class"},
    "div": {"class"}, "pre": {"class"}, "details": {"class", "open"}, "abbr": {"title"},
    "th": {"style", "align"}, "td": {"style", "align"}, "ol": {"start"},
}
_ALIGN_STYLE = re.compile(r"text-align:\s*(left|right|center);?")
_CLASS = re.compile(r"[A-Za-z0-9_\- ]*")


class _PolicyParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.violations: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.violations.append(f"renders a <{tag}> element")
            return
        allowed = _ALLOWED_ATTRS.get(tag, set())
        for name, value in attrs:
            value = value or ""
            if name not in allowed:
                self.violations.append(f"renders <{tag}> with the attribute {name}={value[:40]!r}")
            elif name == "href" and _unsafe_target(value):
                self.violations.append(f"renders a link to {value[:40]!r} (only http, https and mailto links are allowed)")
            elif name == "src" and (_is_remote(value) or value.strip().lower().startswith(("data:", "javascript:"))):
                self.violations.append(f"renders an image from {value[:40]!r} (images only from this site)")
            elif name == "style" and not _ALIGN_STYLE.fullmatch(value.strip()):
                self.violations.append(f"renders <{tag}> with style={value[:40]!r}")
            elif name == "class" and not _CLASS.fullmatch(value):
                self.violations.append(f"renders <{tag}> with class={value[:40]!r}")

    handle_startendtag = handle_starttag

    def handle_comment(self, data: str) -> None:
        self.violations.append("renders an HTML comment")

    def handle_decl(self, decl: str) -> None:
        self.violations.append(f"renders a declaration <!{decl[:20]}>")

    def handle_pi(self, data: str) -> None:
        self.violations.append("renders a processing instruction")

    def unknown_decl(self, data: str) -> None:
        self.violations.append("renders a CDATA section")


_markdown = None


def render_prose(text: str) -> str:
    """``text`` as Python-Markdown renders it on the site (attr_list off, as for entry text)."""
    global _markdown
    if _markdown is None:
        import markdown

        _markdown = markdown.Markdown(extensions=["admonition", "tables", "md_in_html", "pymdownx.superfences",
                                                  "pymdownx.details"])
    _markdown.reset()
    return _markdown.convert(text)


# Characters without which Markdown cannot produce an element that has attributes or comes
# from raw HTML: tags and autolinks need '<', links and images '[', attribute lists '{', entities '&'.
_NEEDS_RENDER = re.compile(r"[<\[{&]")


def rendered_violations(text: str) -> list[str]:
    """What the rendered HTML of ``text`` holds beyond the allow-list (empty when it is safe)."""
    if not _NEEDS_RENDER.search(text):
        return []
    parser = _PolicyParser()
    try:
        parser.feed(render_prose(text))
        parser.close()
    except RecursionError:
        return ["nests too deeply to render (simplify the Markdown)"]
    return list(dict.fromkeys(parser.violations))


# What a URL in an entry may hold: RFC 3986's unreserved and reserved characters and percent
# escapes, less those that can end a Markdown link or an HTML attribute: ( ) < > " ' ` [ ] { }
# | \ ^ and white space. Validation refuses the rest (model.HttpUrl); rendering encodes it.
URL_CHARS = r"A-Za-z0-9\-._~:/?#@!$&*+,;=%"
URL_OUTSIDE = re.compile(f"[^{URL_CHARS}]")


def safe_url(url: str) -> str:
    """A URL for a Markdown link target: anything but http(s) becomes '#unsafe-link', and every
    character that could end the link or an attribute is percent-encoded."""
    if not re.match(r"(?i)https?://", url.strip()):
        return "#unsafe-link"
    return URL_OUTSIDE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8")), url.strip())


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
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(content)), default=0) if "`" in content else 0
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{content}\n{ticks}"


def offset_to_line_col(text: str | bytes, offset: int) -> tuple[int, int]:
    """0-based character offset (a byte offset in bytes) to 0-based (line, column)."""
    newline = b"\n" if isinstance(text, bytes) else "\n"
    line = text.count(newline, 0, offset)
    col = offset - (text.rfind(newline, 0, offset) + 1)
    return line, col
