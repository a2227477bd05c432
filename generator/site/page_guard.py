"""The last check on every page MkDocs writes: nothing in it can run script or load from elsewhere.

Entry text is checked at validation and escaped at rendering (``generator.corpus.safety``); this is
the third layer, over the finished HTML, whoever wrote it (template, theme or entry). A page
fails the build when it has:

- an inline script (the site runs files only; a JSON ``<script type="application/json">``,
  the theme's configuration, is data and allowed);
- a script, frame, object or embed, or an image, from another origin;
- an event-handler attribute (``onclick=``...) or a ``javascript:``/``vbscript:`` or HTML
  ``data:`` URL in any attribute.

The scan is a tokeniser over tags, not a full parser: text and code are escaped by Markdown,
so every literal ``<`` in a page starts a real tag.
"""

from __future__ import annotations

import html
import re

from generator.errors import KbError

_TAG = re.compile(rb"<([a-z][a-z0-9:-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>")
_ATTR = re.compile(rb"([^\s=/>\"']+)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+))?")
_FORBIDDEN_TAGS = frozenset({"iframe", "frame", "frameset", "object", "embed", "applet", "base", "portal"})
_LOADING = {"script": "src", "img": "src", "source": "src", "video": "src", "audio": "src", "track": "src",
            "input": "src", "image": "href", "use": "href"}
_URL_ATTRS = frozenset({"href", "src", "action", "formaction", "data", "poster", "xlink:href", "srcset", "background"})
_BAD_SCHEME = re.compile(r"^(?:javascript:|vbscript:|data:(?!image/(?:png|gif|jpeg|webp)[;,]))")
_ABSOLUTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//|\\\\)")

# Where an offence can start. The page is scanned as lower-cased bytes (fast, and every
# position stays the same), each pattern led by a literal so the scan skips ahead; only the
# tags around the places found are tokenised: a page has hundreds of harmless tags, and the
# guard runs on every page of every build.
_TAGS = re.compile(rb"<(?:script|iframe|frame|object|embed|applet|base|portal|img|source|video|audio|track|input|"
                   rb"image|use)\b")
_HANDLER = re.compile(rb"on[a-z]{1,40}\s*=")
_SAFE_QUOTED = rb"(?:https?://|mailto:|[./#?]|[\w\-]+(?:[/?#.\"']))"
_SAFE_BARE = rb"(?:https?://|mailto:|[./#?]|[\w\-]+(?:[/?#.]|(?=[\s>])))"
_ODD_VALUE = re.compile(rb"=\s*(?:[\"'](?!" + _SAFE_QUOTED + rb")|(?![\"'\s])(?!" + _SAFE_BARE + rb"))")
_URL_NAME_BEFORE = re.compile(rb"(?:href|src|action|formaction|data|poster|srcset|background)\s*$")


class UnsafePage(KbError):
    """A built page holds markup that could run script or fetch from another origin."""


def _value(raw: bytes | None) -> str:
    if raw is None:
        return ""
    text = raw.decode("utf-8", errors="replace")
    if text[:1] in "\"'":
        text = text[1:-1]
    cleaned = html.unescape(text).lower()
    return "".join(ch for ch in cleaned if ord(ch) > 0x20 and not ch.isspace())


def _tag_around(page: bytes, pos: int) -> re.Match[bytes] | None:
    """The tag that contains ``pos``, or None when ``pos`` is in text."""
    start = pos + 1 if page.startswith(b"<", pos) else pos
    for _ in range(64):  # a '<' inside a quoted value is not a tag start: try the one before
        start = page.rfind(b"<", 0, start)
        if start < 0:
            return None
        m = _TAG.match(page, start)
        if m and m.end() > pos:
            return m
        if m:
            return None  # the nearest real tag closes before pos: pos is in text
    return None


def problems(page_html: str) -> list[str]:
    """What in ``page_html`` could run or fetch (empty for a safe page)."""
    raw = page_html.encode("utf-8", errors="surrogateescape")
    low = raw.lower()
    places = [m.start() for m in _TAGS.finditer(low)]
    places += [m.start() for m in _HANDLER.finditer(low)]
    places += [m.start() for m in _ODD_VALUE.finditer(low) if _URL_NAME_BEFORE.search(low, max(0, m.start() - 24), m.start())]
    found: list[str] = []
    seen: set[int] = set()
    for pos in sorted(places):
        m = _tag_around(low, pos)
        if m is None or m.start() in seen:
            continue
        seen.add(m.start())
        found.extend(_tag_problems(m, raw[m.start():min(m.end(), m.start() + 80)].decode("utf-8", errors="replace")))
    return found


def _tag_problems(m: re.Match[bytes], shown: str) -> list[str]:
    found = []
    tag = m.group(1).decode()
    attrs = {a.group(1).decode("utf-8", errors="replace"): a.group(2) for a in _ATTR.finditer(m.group(2))}
    if tag in _FORBIDDEN_TAGS:
        return [f"a <{tag}> element: {shown}"]
    if tag == "script" and "src" not in attrs and _value(attrs.get("type")) != "application/json":
        found.append(f"an inline script: {shown}")
    for name, value in attrs.items():
        if name.startswith("on"):
            found.append(f"an event handler ({name}): {shown}")
        elif name in _URL_ATTRS and _BAD_SCHEME.match(_value(value)):
            found.append(f"a script URL in {name}: {shown}")
    loading = _LOADING.get(tag)
    if loading and loading in attrs:
        target = _value(attrs[loading])
        if _ABSOLUTE.match(target) and not target.startswith("data:"):
            found.append(f"a <{tag}> loaded from another origin: {shown}")
    return found


def check(page_html: str, where: str) -> None:
    """Raise ``UnsafePage`` naming ``where`` and the first offences when the page is not safe."""
    found = problems(page_html)
    if found:
        listed = "; ".join(found[:3]) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")
        raise UnsafePage(f"{where}: the built page holds {listed}. Entry text must be plain Markdown: "
                         "run 'kb validate' to find the entry that causes it")
