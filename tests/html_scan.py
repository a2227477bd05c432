"""Helpers for tests that read built HTML: elements, attributes, scripts and foreign URLs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlsplit

URL = re.compile(r"""https?://[A-Za-z0-9.\-]+(?::[0-9]+)?[^\s"'<>)\\`]*""")
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]"}

# Attributes through which a browser fetches something on its own.
FETCHING = {("script", "src"), ("img", "src"), ("img", "srcset"), ("iframe", "src"), ("link", "href"),
            ("source", "src"), ("source", "srcset"), ("video", "src"), ("video", "poster"), ("audio", "src"),
            ("object", "data"), ("embed", "src"), ("form", "action"), ("input", "src"), ("track", "src")}


@dataclass
class Page:
    elements: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    inline_scripts: list[str] = field(default_factory=list)
    text_in_code: list[str] = field(default_factory=list)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._in_script = False
        self._script_has_src = False
        self._code_depth = 0

    def handle_starttag(self, tag, attrs):  # noqa: D102
        self.page.elements.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = True
            self._script_has_src = any(k == "src" for k, _ in attrs)
        if tag in ("code", "pre"):
            self._code_depth += 1

    def handle_endtag(self, tag):  # noqa: D102
        if tag == "script":
            self._in_script = False
        if tag in ("code", "pre") and self._code_depth:
            self._code_depth -= 1

    def handle_data(self, data):  # noqa: D102
        if self._in_script and not self._script_has_src and data.strip():
            self.page.inline_scripts.append(data)


def parse(html: str) -> Page:
    collector = _Collector()
    collector.feed(html)
    return collector.page


def host_of(url: str) -> str:
    return (urlsplit(url if not url.startswith("//") else "http:" + url).hostname or "").lower()


def foreign_urls(text: str) -> list[str]:
    """Absolute URLs in ``text`` whose host is not this machine."""
    return [m.group(0) for m in URL.finditer(text) if host_of(m.group(0)) and host_of(m.group(0)) not in LOCAL_HOSTS]
