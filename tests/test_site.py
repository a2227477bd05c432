"""The built site: every page exists, no page reaches a third party, hostile text stays inert."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from generator.corpus.validated import Corpus, load_corpus
from generator.corpus.model import CATEGORIES
from html_scan import FETCHING, foreign_urls, host_of, parse

pytestmark = pytest.mark.slow

# Foreign addresses that appear in the theme's own files without being fetched, with why.
ALLOWED_FOREIGN = {
    "www.w3.org": "XML namespace identifiers of inline SVG icons (xmlns); never fetched",
    "fontawesome.com": "licence comment inside an inline SVG icon in the theme's CSS",
    "www.sitemaps.org": "XML namespace of sitemap.xml; never fetched",
    "clipboardjs.com": "licence comment of the clipboard library inside the theme's bundle",
}


def _corpus_urls(corpus: Corpus, edit_prefix: str) -> set[str]:
    """Outside links our own content writes: entry sources and references, sample log sources."""
    urls: set[str] = {edit_prefix}
    dumps = [yaml.safe_dump(e.model_dump(), allow_unicode=True) for e in corpus.entries]  # URLs as written
    dumps.append((ROOT / "tests" / "fixtures" / "logs" / "labels.yaml").read_text(encoding="utf-8"))
    for dumped in dumps:
        urls.update(m.group(0) for m in re.finditer(r"https?://[^\s'\"<>)]+", dumped))
    return urls


def test_site_has_every_page(built_site: Path) -> None:
    corpus = load_corpus(ROOT / "kb" / "entries")
    for e in corpus.entries:
        assert (built_site / "entries" / e.id / "index.html").exists(), e.id
    for cat in CATEGORIES:
        assert (built_site / "categories" / cat / "index.html").exists(), cat
    assert (built_site / "index.html").exists()
    xid_page = (built_site / "xid" / "index.html").read_text(encoding="utf-8")
    for e in corpus.xid_entries():
        assert f'href="../entries/{e.id}/"' in xid_page


def test_every_entry_page_links_to_its_yaml_source(built_site: Path) -> None:
    corpus = load_corpus(ROOT / "kb" / "entries")
    for e in corpus.entries:
        html = (built_site / "entries" / e.id / "index.html").read_text(encoding="utf-8")
        rel = corpus.sources[e.id].relative_to(ROOT).as_posix()
        assert f"/edit/main/{rel}" in html and "Edit this entry" in html, e.id


def test_entry_pages_stay_out_of_the_nav(built_site: Path) -> None:
    corpus = load_corpus(ROOT / "kb" / "entries")
    home = (built_site / "index.html").read_text(encoding="utf-8")
    nav = home.split('class="md-nav md-nav--primary"', 1)[1].split("</nav>", 1)[0]
    for e in corpus.entries:
        assert f"entries/{e.id}/" not in nav


def test_no_page_reaches_another_host(built_site: Path) -> None:
    from generator.config import load

    corpus = load_corpus(ROOT / "kb" / "entries")
    edit_prefix = load(ROOT).edit_url.split("{path}")[0]
    content_urls = _corpus_urls(corpus, edit_prefix)
    # the site's own address (canonical links, sitemap) and the footer's licence and source links
    site_links = set(re.findall(r"https?://[^\s'\"<>)\]]+", (ROOT / "mkdocs.yml").read_text(encoding="utf-8")))
    offences: list[str] = []
    for path in built_site.rglob("*"):
        if path.suffix not in (".html", ".js", ".css", ".json", ".mjs", ".xml") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(built_site).as_posix()
        for url in foreign_urls(text):
            host = host_of(url)
            if host in ALLOWED_FOREIGN:
                continue
            written = html.unescape(url) if path.suffix == ".html" else url  # '&' is '&amp;' in a page
            if path.suffix in (".html", ".json") and any(written.startswith(u) or u.startswith(written) for u in content_urls):
                continue  # an outside link written in entry content (references, sources, example lines)
            if path.suffix in (".html", ".xml") and any(url.startswith(u) for u in site_links):
                continue  # the site's own address or a footer link (a link, never fetched: checked below)
            offences.append(f"{rel}: {url}")
        if path.suffix == ".html":
            for tag, attrs in parse(text).elements:
                for name, value in attrs.items():
                    if tag == "link" and attrs.get("rel") == "canonical":
                        continue  # names the page's own address for search engines; never fetched
                    if (tag, name) in FETCHING and value and host_of(value) and host_of(value) not in ("127.0.0.1", "localhost"):
                        offences.append(f"{rel}: <{tag} {name}={value}> fetches from another host")
    assert not offences, "\n".join(offences[:50])


def test_relations_are_linked_both_ways_on_the_built_pages(built_site: Path) -> None:
    corpus = load_corpus(ROOT / "kb" / "entries")
    by_id = corpus.by_id

    def section(entry_id: str, label: str) -> str:
        html = (built_site / "entries" / entry_id / "index.html").read_text(encoding="utf-8")
        if f"<strong>{label}</strong>" not in html:
            return ""
        return html.split(f"<strong>{label}</strong>", 1)[1].split("<strong>", 1)[0].split("<h2", 1)[0]

    checked = 0
    for e in corpus.entries:
        for target in e.causes:
            assert f'href="../{e.id}/"' in section(target, "Often caused by"), (e.id, "causes", target)
            assert f'href="../{target}/"' in section(e.id, "Can cause"), (e.id, target)
            checked += 1
        for source in e.caused_by:
            assert f'href="../{e.id}/"' in section(source, "Can cause"), (e.id, "caused_by", source)
            checked += 1
        for other in e.related:
            # the reverse link is under "See also", or under a cause/effect heading when the two are
            # also linked that way (a neighbour is listed once per page)
            linked = [label for label in ("See also", "Can cause", "Often caused by")
                      if f'href="../{e.id}/"' in section(other, label)]
            assert len(linked) == 1 or (not linked and e.id in by_id[other].related), (e.id, "related", other, linked)
            checked += 1
    assert checked > 20


def test_every_page_carries_a_policy_without_inline_script_and_holds_none(built_site: Path) -> None:
    """The policy lists no hashes at all (the theme's inline helpers are files here), so a
    script that reaches a page can never run; and no page holds one."""
    from generator.site.csp import META_MARK, POLICY
    from generator.site.page_guard import problems

    pages = list(built_site.rglob("*.html"))
    assert len(pages) > 200
    for page in pages:
        html = page.read_text(encoding="utf-8")
        meta = html.split(META_MARK, 1)[1].split(">", 1)[0] if META_MARK in html else ""
        assert f'content="{POLICY}"' in meta, page
        assert "script-src 'self' 'wasm-unsafe-eval';" in meta and "sha256" not in meta and "unsafe-inline" not in meta
        assert re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", html) == [], page
        assert problems(html) == [], page
        assert '<meta name="referrer" content="no-referrer">' in html, page  # no request names its page
    headers = (built_site / "_headers").read_text(encoding="utf-8")
    assert f"Content-Security-Policy: {POLICY}; frame-ancestors 'self'" in headers and "sha256" not in headers
    assert "Referrer-Policy: no-referrer" in headers


def test_search_index_is_small_and_holds_what_the_ranking_reads(built_site: Path) -> None:
    """The atlas's own search index: every entry once, plain-text answers, its patterns; no page
    loads it (the box fetches it on first use), and the theme's full-text index is gone."""
    import json  # noqa: PLC0415

    from generator.site.search_index import INDEX_FORMAT  # noqa: PLC0415

    found = list((built_site / "assets" / "search").glob("index.*.json"))
    assert len(found) == 1 and not (built_site / "search" / "search_index.json").exists()
    index = json.loads(found[0].read_text(encoding="utf-8"))
    corpus = load_corpus(ROOT / "kb" / "entries")
    assert index["format"] == INDEX_FORMAT
    by_id = {e["i"]: e for e in index["entries"]}
    assert set(by_id) == {e.id for e in corpus.entries}
    xid79 = by_id["xid-79"]
    assert xid79["u"] == "entries/xid-79/" and "fallen off the bus" in xid79["t"].lower()
    assert xid79["p"] and all(isinstance(p, str) for p, _ in xid79["p"])
    assert not [e["i"] for e in index["entries"] if "`" in e["s"] or "](" in e["s"]]
    # it grows with the corpus (titles, answers, patterns): a budget per entry, not one for all
    assert found[0].stat().st_size < 1_000 * len(corpus.entries)
    page = (built_site / "entries" / "xid-79" / "index.html").read_text(encoding="utf-8")
    assert found[0].name in page and "search_index.json" not in page
    assert not (built_site / "assets" / "javascripts" / "workers").exists()  # the theme's search worker is gone


def test_the_site_chrome_is_the_atlas_own(built_site: Path) -> None:
    """Logo, favicon, footer (licences, source, previous/next), titles without repetition, a
    preview description per entry from its quick answer, canonical links and a complete sitemap."""
    import html as html_lib  # noqa: PLC0415

    from generator.site.search_index import first_sentence  # noqa: PLC0415

    site_url = re.search(r'site_url: !ENV \[KB_SITE_URL, "([^"]+)"\]', (ROOT / "mkdocs.yml").read_text()).group(1)
    corpus = load_corpus(ROOT / "kb" / "entries")
    home = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'src="assets/logo.svg"' in home and 'href="assets/favicon.svg"' in home
    assert (built_site / "assets" / "logo.svg").read_text().startswith("<svg")
    title = re.search(r"<title>(.*?)</title>", home).group(1)
    assert title.count("GPU Failure Atlas") == 1, title
    footer = home.split('<footer class="md-footer">', 1)[1]
    for needed in ("creativecommons.org/licenses/by/4.0", "LICENSE-2.0", "github.com/gpu-failure-atlas/gpu-failure-atlas"):
        assert needed in footer, needed
    assert 'class="md-footer__link md-footer__link--next"' in footer  # previous/next between pages
    sitemap = (built_site / "sitemap.xml").read_text(encoding="utf-8")
    locs = set(re.findall(r"<loc>([^<]+)</loc>", sitemap))
    for e in corpus.entries:
        url = f"{site_url}entries/{e.id}/"
        assert url in locs, url
        page = (built_site / "entries" / e.id / "index.html").read_text(encoding="utf-8")
        assert f'<link rel="canonical" href="{url}">' in page, e.id
        page_title = html_lib.unescape(re.search(r"<title>(.*?)</title>", page, re.S).group(1))
        assert page_title.endswith(" · GPU Failure Atlas") and page_title.count("GPU Failure Atlas") == 1, page_title
        preview = html_lib.unescape(re.search(r'<meta property="og:description" content="([^"]*)"', page).group(1))
        assert preview == first_sentence(e.summary, 300), e.id
    assert {f"{site_url}xid/", f"{site_url}diagnose/", f"{site_url}search/"} <= locs


def test_the_404_page_links_stay_inside_the_site_path(built_site: Path) -> None:
    """404.html is served at any depth, so its links are absolute from site_url's path."""
    from html_scan import parse  # noqa: PLC0415

    path = re.search(r'site_url: !ENV \[KB_SITE_URL, "https?://[^/]+([^"]*)"\]', (ROOT / "mkdocs.yml").read_text()).group(1)
    page = (built_site / "404.html").read_text(encoding="utf-8")
    local = [v for tag, attrs in parse(page).elements for k, v in attrs.items()
             if k in ("href", "src") and v and not v.startswith(("http", "#", "mailto:"))]
    assert local and all(v.startswith(path) for v in local), [v for v in local if not v.startswith(path)]
    assert "Page not found" in page and f'action="{path}search/"' in page


def test_no_page_prints_a_list_as_a_paragraph(built_site: Path) -> None:
    """Entry prose with a list right after a paragraph line reaches the page as a list, not as
    one paragraph of dashes (118 pages did before the renderer added the blank line)."""
    offenders = []
    for path in sorted((built_site / "entries").glob("*/index.html")):
        for m in re.finditer(r"<p>(.*?)</p>", path.read_text(encoding="utf-8"), re.S):
            if re.search(r"\n(?:- |\d{1,2}\. )\S", m.group(1)):
                offenders.append(f"{path.parent.name}: {m.group(1)[:80]!r}")
                break
    assert not offenders, offenders[:10]
