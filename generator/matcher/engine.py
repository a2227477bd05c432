"""Run a diagnosis: read, scan, match, rank, report."""

from __future__ import annotations

import io
from typing import BinaryIO, Callable

from .match import Matcher
from .rank import Ranker
from .read import InputStats, chunks
from .report import build
from .scan import Scanner


class Diagnoser:
    """Compiled rules, reusable across inputs (the browser keeps one alive)."""

    def __init__(self, rules: dict, scanner_factory: Callable[[Matcher], Scanner] | None = None, site_url: str = ""):
        self.rules = rules
        self.matcher = Matcher(rules)
        if scanner_factory is not None:  # e.g. the CLI's RE2 scanner, built from the matcher's patterns
            self.matcher.scanner = scanner_factory(self.matcher)
        self.ranker = Ranker(rules)
        self.site_url = site_url

    def diagnose(self, stream: BinaryIO, progress: Callable[[int], None] | None = None) -> dict:
        stats = InputStats()

        def reporting():
            for chunk in chunks(stream, stats):
                yield chunk
                if progress:
                    progress(stats.bytes)

        hits = list(self.matcher.hits(reporting()))
        return build(self.ranker.rank(hits), stats, self.site_url)

    def diagnose_text(self, text: str) -> dict:
        return self.diagnose(io.BytesIO(text.encode("utf-8", errors="surrogateescape")))
