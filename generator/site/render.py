"""Render the corpus into Markdown pages for MkDocs with Jinja2 templates.

Generated pages land in folders of ``docs/`` that git ignores (``GENERATED``); hand-written
pages live beside them. A page is only rewritten when its content changed, so ``mkdocs
serve`` reloads just what an edit touched.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from generator import atomic, config
from generator.corpus import forked
from generator.exports import datasets, fleet as fleet_exports
from generator.site import search_index
from generator.corpus.validated import Corpus
from generator.exports.rules import compile_rules
from generator.errors import relative_path
from generator.corpus.model import CATEGORIES, CATEGORY_TITLES, SEVERITIES, Entry
from generator.corpus.safety import escape_attribute, escape_markdown, escape_text, fence, safe_url

TEMPLATES = Path(__file__).with_name("templates")
GENERATED = ("entries", "categories", "xid", "data")
GENERATED_FILES = ("index.md",)


@dataclass
class RenderStats:
    written: int
    unchanged: int
    removed: int


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        undefined=StrictUndefined,
        autoescape=False,  # output is Markdown; every value passes through an explicit filter
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = lambda s: escape_markdown(list_breaks(s)) if s else ""
    env.filters["text"] = escape_text
    env.filters["attr"] = escape_attribute
    env.filters["fence"] = fence
    env.filters["url"] = safe_url
    env.filters["json"] = lambda v: json.dumps(v, ensure_ascii=False)
    env.filters["indent4"] = lambda s: "\n".join(("    " + line) if line.strip() else "" for line in s.splitlines())
    # the page description (search engines, link previews): plain text, no Markdown
    env.filters["first_sentence"] = lambda text: search_index.first_sentence(text, 300)
    env.filters["meaning"] = lambda e: escape_text(datasets.meaning(e).replace("`", ""))  # a one-line table cell
    env.filters["inline_code"] = inline_code
    # a title's code spans as code (H1, related links); its plain form goes to front matter (attr)
    env.filters["title"] = lambda s: inline_code(s, keep_unpaired=True)
    env.filters["wbr"] = lambda s: escape_text(s).replace("&#95;", "&#95;<wbr>") if s else ""
    return env


_LIST_ITEM = re.compile(r" {0,3}(?:[-*+]|\d{1,3}[.)]) +\S")
_FENCE = re.compile(r" {0,3}(?:```|~~~)")
_LIST_ITEM_AFTER_FIRST = re.compile(r"\n" + _LIST_ITEM.pattern)  # a line after the first that _LIST_ITEM matches


def list_breaks(text: str) -> str:
    """A blank line before a list that follows a paragraph line directly.

    Entry prose is written as people write it ("This happens when:" then "- first case"), and
    CommonMark starts a list there; Python-Markdown, which MkDocs uses, needs a blank line first
    and would otherwise print the items as one paragraph with dashes. Fenced code is left alone,
    and so is a list already under way (its items and their continuation lines).
    """
    if not _LIST_ITEM_AFTER_FIRST.search(text):
        return text  # the usual case: no line but the first could start a list (the first never gets a blank)
    return _list_breaks_walk(text)


def _list_breaks_walk(text: str) -> str:
    """``list_breaks`` line by line (what it does when a list may start after the first line)."""
    out: list[str] = []
    in_fence = in_list = after_blank = False
    prev_blank = True
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            if not line.strip():
                after_blank = True
            elif _LIST_ITEM.match(line):
                if not prev_blank and not in_list:
                    out.append("")
                in_list, after_blank = True, False
            elif after_blank and not line.startswith((" ", "\t")):
                in_list = after_blank = False  # a new paragraph: the list has ended
            else:
                after_blank = False
        prev_blank = not line.strip()
        out.append(line)
    return "\n".join(out)


_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def inline_code(text: str, keep_unpaired: bool = False) -> str:
    """One line of Markdown prose (an Xid meaning, a title) as inert HTML: code spans become
    ``<code>`` (breakable only after an underscore), any other text is escaped. A backtick left
    unpaired is dropped from prose (a first sentence cut inside a code span) and kept in a title
    (``keep_unpaired``), where it is part of a quoted message: glibc's "version `GLIBC_2.34' not
    found"."""
    def plain(segment: str) -> str:
        return escape_text(segment if keep_unpaired else segment.replace("`", ""))

    out, pos = [], 0
    for m in _CODE_SPAN.finditer(text or ""):
        out.append(plain(text[pos:m.start()]))
        code = escape_text(m.group(2).strip() or m.group(2)).replace("&#95;", "&#95;<wbr>")
        out.append(f"<code>{code}</code>")
        pos = m.end()
    out.append(plain((text or "")[pos:]))
    return "".join(out)


def pages(corpus: Corpus, repo_root: Path) -> dict[str, str]:
    """Every generated file: path relative to docs/ -> text (Markdown pages and the open data)."""
    env = environment()
    return {**_entry_pages(corpus, repo_root, env), **_other_pages(corpus, env)}


def _entry_pages(corpus: Corpus, repo_root: Path, env: Environment) -> dict[str, str]:
    """One page per entry (``entries/<id>.md``), in the corpus's order."""
    settings = config.load(repo_root)
    by_id = corpus.by_id
    reverse: dict[str, dict[str, list[str]]] = {e.id: {"causes": [], "caused_by": [], "related": []} for e in corpus.entries}
    for e in corpus.entries:
        for target in e.causes:
            reverse[target]["caused_by"].append(e.id)
        for target in e.caused_by:
            reverse[target]["causes"].append(e.id)
        for target in e.related:
            reverse[target]["related"].append(e.id)

    def relation(e: Entry, kind: str) -> list[Entry]:
        ids = list(dict.fromkeys([*getattr(e, kind), *reverse[e.id][kind]]))
        return [by_id[i] for i in ids if i in by_id and i != e.id]

    out: dict[str, str] = {}
    entry_tpl = env.get_template("entry.md.j2")
    for e in corpus.entries:
        source = corpus.sources.get(e.id)
        rel_source = _relative(source, repo_root) if source else None
        causes, caused_by = relation(e, "causes"), relation(e, "caused_by")
        linked = {r.id for r in (*causes, *caused_by)}
        out[_entry_page(e)] = entry_tpl.render(
            e=e,
            category_title=CATEGORY_TITLES[e.category],
            edit_url=settings.edit_url.format(path=rel_source) if rel_source else None,
            source_path=rel_source,
            causes=causes,
            caused_by=caused_by,
            # an entry already listed as a cause or an effect is not listed again under "See also"
            related=[r for r in relation(e, "related") if r.id not in linked],
        )
    return out


def _entry_page(e: Entry) -> str:
    return f"entries/{e.id}.md"


def _other_pages(corpus: Corpus, env: Environment) -> dict[str, str]:
    """The category, Xid and home pages and the open data (rules, datasets, fleet exports)."""
    out: dict[str, str] = {}
    counts = Counter(e.category for e in corpus.entries)
    cat_tpl = env.get_template("category.md.j2")
    for cat in CATEGORIES:
        out[f"categories/{cat}.md"] = cat_tpl.render(
            category=cat, title=CATEGORY_TITLES[cat], entries=corpus.in_category(cat), severities=SEVERITIES
        )
    out["categories/index.md"] = env.get_template("categories.md.j2").render(
        categories=[(c, CATEGORY_TITLES[c], counts.get(c, 0)) for c in CATEGORIES]
    )
    rows = datasets.xid_rows(corpus)
    out["xid/index.md"] = env.get_template("xid.md.j2").render(
        rows=rows,
        origins=sorted({o for r in rows for o in r["origin"]}),
        actions=sorted({r["immediate_action"] for r in rows if r["immediate_action"]}),
        severities=[s for s in SEVERITIES if any(r["severity"] == s for r in rows)],
    )
    rules = compile_rules(corpus)  # once: the open data and the fleet exports both carry it
    out.update({f"data/{name}": text for name, text in datasets.files(corpus, rules).items()})
    out.update({f"data/{name}": text
                for name, text in fleet_exports.files(corpus, fleet_exports.site_address(), rules["hash"]).items()})
    out["index.md"] = env.get_template("home.md.j2").render(
        total=len(corpus.entries),
        categories=[(c, CATEGORY_TITLES[c], counts.get(c, 0)) for c in CATEGORIES if counts.get(c)],
        xid_count=len(corpus.xid_entries()),
        signature_count=sum(len(e.signatures) for e in corpus.entries),
        example_count=sum(len(s.examples) for e in corpus.entries for s in e.signatures),
    )
    return out


def _relative(path: Path, root: Path) -> str:
    shown = relative_path(path, root)
    return shown if shown is not None else path.as_posix()


def write_pages(generated: dict[str, str], docs_dir: Path) -> RenderStats:
    """Write pages under ``docs_dir``; remove stale generated pages; skip unchanged ones."""
    removed = _remove_stale({docs_dir / rel for rel in generated}, docs_dir)
    written, unchanged = _write_files(generated, docs_dir)
    return RenderStats(written, unchanged, removed)


def _remove_stale(wanted: set[Path], docs_dir: Path) -> int:
    """Remove the files in the generated folders that are not ``wanted``; how many."""
    removed = 0
    for folder in GENERATED:
        base = docs_dir / folder
        if base.exists():
            for path in base.rglob("*"):
                if path.is_file() and path not in wanted:
                    path.unlink()
                    removed += 1
    return removed


def _write_files(generated: dict[str, str], docs_dir: Path) -> tuple[int, int]:
    """Write each page that is new or changed; (written, unchanged)."""
    written = unchanged = 0
    made: set[Path] = set()
    for rel, content in generated.items():
        path = docs_dir / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        if not path.exists():  # a new page: nothing can read a half-written old one
            path.write_text(content, encoding="utf-8")
            written += 1
            continue
        if path.read_text(encoding="utf-8") == content:
            unchanged += 1
            continue
        atomic.write_text(path, content)  # `mkdocs serve` may be reading it, another build writing it
        written += 1
    return written, unchanged


class SiteBuild:
    """``write_pages(pages(corpus, repo_root), docs_dir)`` in two steps the build times apart
    (``render``, then ``write``), and on two cores when it can: with ``parallel``, a forked
    child (``forked.Child``) renders and writes the entry pages (most of the files) while this
    process renders the rest (the open data takes the longest) and writes it. The same files
    are written; stale pages are removed once every page is written."""

    def __init__(self, corpus: Corpus, repo_root: Path, docs_dir: Path, parallel: bool = False) -> None:
        self.corpus, self.repo_root, self.docs_dir = corpus, repo_root, docs_dir
        self.env = environment()
        self.env.get_template("entry.md.j2")  # compiled once, before a fork: both processes use it
        self.child: forked.Child | None = None
        if parallel and forked.worth(len(corpus.entries)):
            self.child = forked.Child([self._entry_job])

    def _entry_job(self) -> int:
        written, _ = _write_files(_entry_pages(self.corpus, self.repo_root, self.env), self.docs_dir)
        return written

    def render(self) -> dict[str, str]:
        """The pages this process writes: every page, or all but the entry pages when a child
        writes those."""
        others = _other_pages(self.corpus, self.env)
        if self.child is not None:
            return others
        return {**_entry_pages(self.corpus, self.repo_root, self.env), **others}

    def write(self, generated: dict[str, str]) -> None:
        """Write ``generated`` (what ``render`` gave), wait for the child's entry pages, then
        remove the stale pages."""
        try:
            _write_files(generated, self.docs_dir)
            wanted = {self.docs_dir / rel for rel in generated}
            if self.child is not None:
                self.child.result(0)  # its pages, or (when it failed) written here now
                wanted |= {self.docs_dir / _entry_page(e) for e in self.corpus.entries}
            _remove_stale(wanted, self.docs_dir)
        finally:
            self.close()

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


def clean(docs_dir: Path) -> None:
    """Remove every generated page."""
    for folder in GENERATED:
        shutil.rmtree(docs_dir / folder, ignore_errors=True)
    for name in GENERATED_FILES:
        (docs_dir / name).unlink(missing_ok=True)
