"""Rendering: entry pages carry every section, relations both ways, escaped hostile text."""

from __future__ import annotations

from pathlib import Path

from generator.corpus.validated import Corpus
from generator.corpus.model import Entry
from generator.site.render import pages, write_pages

from conftest import ROOT


def _entry(id: str, **extra) -> Entry:
    data = {
        "id": id,
        "title": f"Title of {id}",
        "category": "cuda",
        "severity": "high",
        "owner": "application",
        "summary": f"Summary of {id}.",
        "root_cause": f"Root cause of {id}.",
        "references": [{"title": "Ref", "url": "https://docs.example.org/ref"}],
    }
    data.update(extra)
    return Entry.model_validate(data)


def _corpus(*entries: Entry) -> Corpus:
    return Corpus(root=ROOT / "kb" / "entries", entries=list(entries),
                  sources={e.id: ROOT / "kb" / "entries" / e.category / f"{e.id}.yaml" for e in entries})


def test_relations_render_both_ways() -> None:
    a = _entry("alpha-fault", causes=["beta-fault"], related=["gamma-fault"])
    b = _entry("beta-fault")
    c = _entry("gamma-fault", caused_by=["beta-fault"])
    out = pages(_corpus(a, b, c), ROOT)
    def section(page: str, label: str) -> str:
        return page.split(f"**{label}**", 1)[1].split("**", 1)[0] if f"**{label}**" in page else ""

    assert "[Title of beta-fault](beta-fault.md)" in section(out["entries/alpha-fault.md"], "Can cause")
    assert "[Title of alpha-fault](alpha-fault.md)" in section(out["entries/beta-fault.md"], "Often caused by")
    assert "[Title of gamma-fault](gamma-fault.md)" in section(out["entries/beta-fault.md"], "Can cause")
    assert "[Title of alpha-fault](alpha-fault.md)" in section(out["entries/gamma-fault.md"], "See also")
    assert section(out["entries/alpha-fault.md"], "Often caused by") == ""


def test_an_entry_listed_as_cause_or_effect_is_not_listed_again_under_see_also() -> None:
    """350 entries name the same neighbour in `related` and in `causes`/`caused_by`: the page showed
    the link twice, under "Can cause" and under "See also"."""
    a = _entry("alpha-fault", causes=["beta-fault"], related=["beta-fault", "gamma-fault"])
    b = _entry("beta-fault", related=["alpha-fault"])
    c = _entry("gamma-fault")
    out = pages(_corpus(a, b, c), ROOT)
    alpha, beta = out["entries/alpha-fault.md"], out["entries/beta-fault.md"]
    assert alpha.count("](beta-fault.md)") == 1 and "**Can cause**" in alpha
    assert "[Title of gamma-fault](gamma-fault.md)" in alpha.split("**See also**", 1)[1]
    assert beta.count("](alpha-fault.md)") == 1 and "**Often caused by**" in beta and "**See also**" not in beta


def test_entry_page_has_sections_and_edit_link() -> None:
    e = _entry(
        "alpha-fault",
        mechanism="How it happens.",
        fix=[{"text": "Reset it.", "command": "nvidia-smi -r -i 0", "rung": "reset-gpu"},
             {"text": "Check it.", "command": "nvidia-smi -q", "rung": "verify"}],
        signatures=[{"id": "main", "pattern": "boom", "examples": [{"line": "boom!", "source": "https://github.com/o/r/issues/1"}]}],
    )
    page = pages(_corpus(e), ROOT)["entries/alpha-fault.md"]
    for needle in ("# Title of alpha-fault", "!!! abstract \"Quick answer\"", "## Root cause", "## How it happens",
                   "## Fix", "nvidia-smi -r -i 0", "kb-rung-verify", "## Log signatures", "boom!",
                   "github.com/o/r/issues/1", "## References", "Edit this entry",
                   "/edit/main/kb/entries/cuda/alpha-fault.yaml"):
        assert needle in page, needle
    assert "## At scale" not in page, "absent sections must not render as empty headings"


def test_hostile_text_is_escaped_even_if_validation_were_bypassed() -> None:
    e = _entry(
        "alpha-fault",
        title="<script>alert(1)</script>",
        summary="<img src=x onerror=alert(1)> [x](javascript:alert(1))",
        fix=[{"text": "ok", "command": "```\n<script>alert(2)</script>"}],
    )
    page = pages(_corpus(e), ROOT)["entries/alpha-fault.md"]
    front, body = page.split("---", 2)[1:]
    assert "<" not in front
    assert "<script>" not in body.replace("````bash\n    ```\n    <script>", "")
    assert "<img" not in body and "javascript:" not in body


def test_home_counts_and_category_pages() -> None:
    a = _entry("alpha-fault")
    x = _entry("xid-79", category="xid", xid={"code": 79, "name": "GPU has fallen off the bus"})
    out = pages(_corpus(a, x), ROOT)
    assert "**2 entries**" in out["index.md"] and "**1 Xid codes**" in out["index.md"]
    assert "[Title of alpha-fault](../entries/alpha-fault.md)" in out["categories/cuda.md"]
    assert '<tr data-code="79"' in out["xid/index.md"] and '<a href="../entries/xid-79/">GPU has fallen off the bus</a>' in out["xid/index.md"]
    assert "No entries in this category yet" in out["categories/nccl.md"]


def test_category_rows_carry_the_first_sentence_of_the_quick_answer_as_inert_text() -> None:
    a = _entry("alpha-fault", summary="The `kernel` wrote | past <b>its</b> buffer. Second sentence stays out.")
    row = next(line for line in pages(_corpus(a), ROOT)["categories/cuda.md"].splitlines() if "alpha-fault" in line)
    assert "The kernel wrote &#124; past &lt;b&gt;its&lt;/b&gt; buffer." in row and "Second sentence" not in row
    assert row.count(" | ") == 3  # four cells: the pipe in the prose did not split the row


def test_write_pages_skips_unchanged_and_removes_stale(tmp_path: Path) -> None:
    first = {"entries/a.md": "A", "entries/b.md": "B"}
    assert write_pages(first, tmp_path).written == 2
    stats = write_pages({"entries/a.md": "A"}, tmp_path)
    assert (stats.written, stats.unchanged, stats.removed) == (0, 1, 1)
    assert not (tmp_path / "entries" / "b.md").exists()


def test_front_matter_cannot_break_out_of_html_attributes() -> None:
    e = _entry("alpha-fault", title='A "quoted" <b>title</b>', summary='x" onload="alert(1)')
    head = pages(_corpus(e), ROOT)["entries/alpha-fault.md"].split("---")[1]
    assert 'onload="' not in head and "<b>" not in head
    assert "&quot;quoted&quot;" in head


def test_a_list_right_after_a_paragraph_line_becomes_a_list() -> None:
    """Prose written as "This happens when:" then "- a case" renders as a list (Python-Markdown
    needs the blank line that list_breaks adds); code and lists under way are left as they are."""
    import markdown  # noqa: PLC0415

    from generator.site.render import list_breaks  # noqa: PLC0415

    text = "It fails when:\n- one\n  still one\n- two\n\nThen:\n1. first\n2. second\n```\nkeep:\n- this\n```"
    html = markdown.markdown(list_breaks(text), extensions=["fenced_code"])
    assert html.count("<li>") == 4 and "<ul>" in html and "<ol>" in html
    assert "keep:\n- this" in html  # inside the fence: untouched
    assert list_breaks("- a\n- b\n\ntext") == "- a\n- b\n\ntext"
    assert markdown.markdown(text, extensions=["fenced_code"]).count("<li>") == 0  # what it fixes


def test_list_breaks_shortcut_returns_what_the_line_walk_returns() -> None:
    """list_breaks returns a text as it is when no line after the first could start a list: the
    line walk must agree on every prose text of the corpus and on random texts built of list
    markers, fences, indents and blank lines."""
    import random  # noqa: PLC0415

    from generator.corpus.validated import load_corpus  # noqa: PLC0415
    from generator.site.render import _list_breaks_walk, list_breaks  # noqa: PLC0415

    corpus = load_corpus(ROOT / "kb" / "entries")
    texts = [t for e in corpus.entries for t in (e.summary, e.root_cause, e.mechanism, e.at_scale, e.notes,
                                                  *(s.text for s in e.fix), *(s.why for s in e.symptoms)) if t]
    assert any(list_breaks(t) != t for t in texts), "the corpus has prose whose list gets a blank line"
    rng = random.Random(3)
    pieces = ["- ", "* ", "+ ", "1. ", "12) ", "1234. ", "   - ", "    - ", "-", "-\t", "```", "~~~", "   ```", " ", "\t",
              "word", "x", "\n", "\n", "\n", "\n\n", "２. ", "١. "]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randrange(30))) for _ in range(20000)]
    for text in texts:
        assert list_breaks(text) == _list_breaks_walk(text), text


def test_code_spans_in_titles_render_as_code_and_a_quoting_backtick_stays() -> None:
    a = _entry("alpha-fault", title="Lightning: `Trainer(strategy='ddp')` is not compatible with `<graph>`",
               related=["beta-fault"])
    b = _entry("beta-fault", title="version `GLIBC_2.34' not found (required by libfoo.so)")
    out = pages(_corpus(a, b), ROOT)
    page_a, page_b = out["entries/alpha-fault.md"], out["entries/beta-fault.md"]
    h1 = page_a.split("\n# ", 1)[1].split("\n", 1)[0]
    assert h1 == ("Lightning: <code>Trainer(strategy=&#x27;ddp&#x27;)</code> is not compatible with "
                  "<code>&lt;graph&gt;</code>"), h1
    assert "&#96;" not in h1
    # the unpaired backtick is part of glibc's quoting: kept, inert
    assert "# version &#96;GLIBC&#95;2.34&#x27; not found" in page_b
    # the front matter (tab title, header) is plain text without the code spans' backticks
    assert 'title: "Lightning: Trainer(strategy=&#x27;ddp&#x27;) is not compatible with &lt;graph&gt;"' in page_a
    # links to it from other pages and category tables show the code too
    assert "[Lightning: <code>Trainer(strategy=&#x27;ddp&#x27;)</code>" in page_b
    assert "<code>Trainer(strategy=&#x27;ddp&#x27;)</code>" in out["categories/cuda.md"]
