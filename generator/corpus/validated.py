"""The validated corpus: load every entry file, run every check, fail once with all problems."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from generator.corpus.checks import run_checks
from generator.errors import CorpusError
from generator.corpus.load import LoadedFile, load_corpus_files
from generator.corpus.model import CATEGORIES, Entry

DEFAULT_ROOT = Path("kb/entries")


@dataclass
class Corpus:
    """Every entry of a clean corpus, sorted by category then id, with where each came from."""

    root: Path
    entries: list[Entry]
    sources: dict[str, Path] = field(default_factory=dict)

    @property
    def by_id(self) -> dict[str, Entry]:
        return {e.id: e for e in self.entries}

    def in_category(self, category: str) -> list[Entry]:
        return [e for e in self.entries if e.category == category]

    def xid_entries(self) -> list[Entry]:
        return sorted((e for e in self.entries if e.xid is not None), key=lambda e: e.xid.code)  # type: ignore[union-attr]


def _sort_key(e: Entry) -> tuple[int, int, str]:
    code = e.xid.code if e.xid else 0
    return (CATEGORIES.index(e.category), code, e.id)


def load_corpus(root: Path = DEFAULT_ROOT) -> Corpus:
    """Load and check the corpus under ``root``; raise ``CorpusError`` listing every problem."""
    files, problems = load_corpus_files(root)
    problems.extend(run_checks(files))
    if problems:
        raise CorpusError(problems, checked=len(files))
    return corpus_from_files(root, files)


def corpus_from_files(root: Path, files: list[LoadedFile]) -> Corpus:
    entries = sorted((f.entry for f in files if f.entry is not None), key=_sort_key)
    sources = {f.entry.id: f.path for f in files if f.entry is not None}
    return Corpus(root=root, entries=entries, sources=sources)
