"""The site search's index: what a pasted error is matched against, written once per build.

Every page loads none of it: the search box fetches this file the first time it gets focus or
text. It holds, per entry, only what the ranking in ``docs/javascripts/kb-search.js`` reads:

- ``t`` title, ``i`` id, ``u`` page path, ``c`` category, ``s`` the quick answer's first
  sentence as plain text (shown under the title);
- ``a`` aliases and ``g`` tags (exact error strings and keywords);
- ``p`` the signatures' patterns, so a pasted log line is recognised the way the log doctor
  recognises it (``[pattern, ignore_case]``; the browser compiles them with JavaScript's
  RegExp, and a browser test checks every one against its own examples);
- ``r`` how many other entries point at this one (related, causes, caused_by): a small prior
  that lets the common failure win a tie on a two-word query;
- ``w`` present (1) on a ``wrapper`` entry, whose recognised line gives way to any other
  entry's recognised line in the same paste (as the log doctor makes it collateral).

The site's other pages are listed with their headings (``pages``). The file name carries a
content hash, given to the templates as ``config.extra.kb_search_index``, so a rebuilt index
is never served from a stale cache.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

from generator.exports import datasets
from generator.corpus.categories import CATEGORY_TITLES
from generator.corpus.validated import Corpus

INDEX_FORMAT = "kb.search/1"
# pages other than entries and categories, with the words a reader would search them by
SITE_PAGES = (
    ("", "GPU Failure Atlas: home", "home start browse categories"),
    ("diagnose/", "Log doctor: paste a log, get the root cause", "log doctor diagnose paste upload file report"),
    ("xid/", "All Xid codes side by side", "xid codes table compare catalog immediate action reset"),
    ("categories/", "Categories", "categories browse sections"),
    ("data/", "Open data: the corpus as JSON, CSV and rules", "open data download json csv rules export api"),
    ("contributing/", "Contributing: add or fix an entry", "contributing contribute add entry yaml schema validate pull request"),
)
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def plain_text(markdown: str) -> str:
    """Markdown prose as one line of plain text: links keep their words, no backticks or emphasis."""
    text = _MARKDOWN_LINK.sub(r"\1", markdown)
    text = text.replace("`", "").replace("**", "").replace("__", "")
    return " ".join(text.split())


def first_sentence(markdown: str, limit: int = 220) -> str:
    """The quick answer's first sentence as plain text, cut at a word past ``limit`` characters
    (search results and link previews show it)."""
    head = datasets.first_sentence(plain_text(markdown))
    return head if len(head) <= limit else head[: limit - 1].rsplit(" ", 1)[0] + "…"


def build(corpus: Corpus) -> dict:
    """The index document for ``corpus``."""
    pointed: Counter[str] = Counter()
    for e in corpus.entries:
        for target in {*e.related, *e.causes, *e.caused_by}:
            if target != e.id:
                pointed[target] += 1
    entries = []
    for e in corpus.entries:
        entries.append({
            "i": e.id,
            "t": e.title,
            "u": f"entries/{e.id}/",
            "c": e.category,
            "s": first_sentence(e.summary),
            "a": list(e.aliases),
            "g": list(e.tags),
            "p": [[s.pattern, _ignores_case(s.pattern)] for s in e.signatures],
            "r": pointed[e.id],
            **({"w": 1} if e.wrapper else {}),
        })
    pages = [{"u": path, "t": title, "k": words} for path, title, words in SITE_PAGES]
    present = {e.category for e in corpus.entries}
    pages += [{"u": f"categories/{cat}/", "t": f"Category: {title}", "k": f"category {cat} {title}"}
              for cat, title in CATEGORY_TITLES.items() if cat in present]
    return {"format": INDEX_FORMAT, "entries": entries, "pages": pages}


def _ignores_case(pattern: str) -> bool:
    return pattern.startswith("(?i)")


def serialise(index: dict) -> tuple[str, str]:
    """The index as compact JSON and the file name it is served under (content-hashed)."""
    text = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return text, f"assets/search/index.{digest}.json"
