"""Run a diagnosis: read, scan, match, rank, report."""

from __future__ import annotations

import io
from typing import BinaryIO, Callable

from .job import ArchiveFeed, Job
from .match import Matcher
from .rank import Ranker
from .resemble import Resembler
from .read import CHUNK_BYTES
from .scan import Scanner
from .unpack import UnpackError


class Diagnoser:
    """Compiled rules, reusable across inputs (the browser keeps one alive)."""

    def __init__(self, rules: dict, scanner_factory: Callable[[Matcher], Scanner] | None = None, site_url: str = "",
                 lazy: bool = False):
        """``lazy`` compiles each signature on first use (the browser, whose rules its own build checked)."""
        self.rules = rules
        self.matcher = Matcher(rules, lazy=lazy)
        if scanner_factory is not None:  # e.g. the CLI's RE2 scanner, built from the matcher's patterns
            self.matcher.scanner = scanner_factory(self.matcher)
        self.ranker = Ranker(rules)
        self._resembler: Resembler | None = None
        self.site_url = site_url

    @property
    def resembler(self) -> Resembler:
        """The closest-wording index, built the first time a log matches no failure (most never need it)."""
        if self._resembler is None:
            self._resembler = Resembler(self.rules.get("resemble"))
        return self._resembler

    def diagnose(self, stream: BinaryIO, progress: Callable[[int], None] | None = None, name: str = "input") -> dict:
        """Diagnose a whole stream: the same session the browser feeds piece by piece."""
        session = self.session(name)
        while block := stream.read(CHUNK_BYTES):
            seen = session.feed(block)
            if progress:
                progress(seen)
        return session.finish()

    def session(self, name: str | None = "input") -> "Session":
        """An incremental diagnosis: feed() bytes as they arrive, then finish()."""
        return Session(self, name)

    def diagnose_text(self, text: str) -> dict:
        return self.diagnose(io.BytesIO(text.encode("utf-8", errors="surrogateescape")))


class Session:
    """A diagnosis fed piece by piece (the browser streams large files this way), one input
    after another: ``begin(name)`` starts the next input (a log, a .gz, a .zip or a tarball,
    each member its own source), ``feed`` gives it bytes, ``finish`` makes one report.

    Hits are folded into a Tally as they arrive (counts, first and last lines, a bounded
    sample of evidence), so memory grows neither with the input nor with how much matches.
    """

    def __init__(self, diagnoser: Diagnoser, name: str | None = "input"):
        self.job = Job(diagnoser)
        self.current: ArchiveFeed | None = None
        self.seen = 0
        if name is not None:
            self.begin(name)

    def begin(self, name: str) -> None:
        """Start the next input; the one before it is finished first."""
        self._close_current()
        self.current = self.job.archive(name)

    def feed(self, block: bytes) -> int:
        """Take the next piece of the current input; returns the bytes seen so far (all inputs)."""
        self.seen += len(block)
        if self.current is not None:
            try:
                self.current.feed(bytes(block))
            except UnpackError as exc:
                self.job.notes.append(str(exc))
                self.current.abandon()
                self.current = None  # the rest of this input is skipped; the note says why
        return self.seen

    def _close_current(self) -> None:
        if self.current is not None:
            try:
                self.current.close()
            except UnpackError as exc:
                self.job.notes.append(str(exc))
                self.current.abandon()
            self.current = None

    def finish(self) -> dict:
        self._close_current()
        return self.job.finish()
