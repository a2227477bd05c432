"""Run a diagnosis: read, scan, match, rank, report."""

from __future__ import annotations

import io
from typing import BinaryIO, Callable

from .match import Matcher
from .rank import Ranker, Tally
from .read import CHUNK_BYTES, ChunkReader, InputStats
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
        """Diagnose a whole stream: the same session the browser feeds piece by piece."""
        session = self.session()
        while block := stream.read(CHUNK_BYTES):
            seen = session.feed(block)
            if progress:
                progress(seen)
        return session.finish()

    def session(self) -> "Session":
        """An incremental diagnosis: feed() bytes as they arrive, then finish()."""
        return Session(self)

    def diagnose_text(self, text: str) -> dict:
        return self.diagnose(io.BytesIO(text.encode("utf-8", errors="surrogateescape")))


class Session:
    """A diagnosis fed piece by piece (the browser streams a large file this way).

    Hits are folded into a Tally as they arrive (counts, first and last lines, a bounded
    sample of evidence), so memory grows neither with the input nor with how much matches.
    """

    def __init__(self, diagnoser: Diagnoser):
        self.diagnoser = diagnoser
        self.stats = InputStats()
        self.reader = ChunkReader(self.stats)
        self.tally = Tally(diagnoser.ranker)

    def feed(self, block: bytes) -> int:
        """Take the next piece of the log; returns the number of bytes seen so far."""
        self.tally.extend(self.diagnoser.matcher.hits(self.reader.feed(bytes(block))))
        return self.stats.bytes

    def finish(self) -> dict:
        self.tally.extend(self.diagnoser.matcher.hits(self.reader.close()))
        return build(self.diagnoser.ranker.rank(self.tally), self.stats, self.diagnoser.site_url)
