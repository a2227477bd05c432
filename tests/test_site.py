"""The built site: every page exists, no page reaches a third party, hostile text stays inert."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from generator.corpus import Corpus, load_corpus
from generator.model import CATEGORIES, Entry
from generator.render import pages, write_pages
from html_scan import FETCHING, foreign_urls, host_of, parse

pytestmark = pytest.mark.slow

# Foreign addresses that appear in the theme's own files without being fetched, with why.
ALLOWED_FOREIGN = {
    "www.w3.org": "XML namespace identifiers of inline SVG icons (xmlns); never fetched",
    "fontawesome.com": "licence comment inside an inline SVG icon in the theme's CSS",
    "www.sitemaps.org": "XML namespace of sitemap.xml; never fetched",
    "bit.ly": "text of a console warning in the theme's search worker",
    "clipboardjs.com": "licence comment of the clipboard library inside the theme's bundle",
    "lunrjs.com": "licence comment of the search library inside the theme's search worker",
    "tartarus.org": "comment crediting the Porter stemmer inside the theme's search worker",
}


def _corpus_urls(corpus: Corpus, edit_prefix: str) -> set[str]:
    """Outside links our own content writes: entry sources and references, sample log sources."""
    urls: set[str] = {edit_prefix}
    dumps = [yaml.safe_dump(e.model_dump()) for e in corpus.entries]
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
            if path.suffix in (".html", ".json") and any(url.startswith(u) or u.startswith(url) for u in content_urls):
                continue  # an outside link written in entry content (references, sources)
            offences.append(f"{rel}: {url}")
        if path.suffix == ".html":
            for tag, attrs in parse(text).elements:
                for name, value in attrs.items():
                    if (tag, name) in FETCHING and value and host_of(value) and host_of(value) not in ("127.0.0.1", "localhost"):
                        offences.append(f"{rel}: <{tag} {name}={value}> fetches from another host")
    assert not offences, "\n".join(offences[:50])


def test_hostile_entry_renders_no_script(tmp_path: Path) -> None:
    """Bypass validation entirely: even then the renderer and MkDocs emit no live markup."""
    hostile = Entry.model_validate({
        "id": "hostile-entry",
        "title": "Hostile <script>alert('title')</script>",
        "category": "cuda",
        "severity": "high",
        "owner": "application",
        "summary": "<script>alert('summary')</script> <img src=x onerror=alert('img')>",
        "root_cause": "[click](javascript:alert('link')) <iframe src=javascript:alert('frame')></iframe>",
        "mechanism": "<a href='javascript:alert(1)' onclick=alert('click')>x</a> `<script>kept as code</script>`",
        "symptoms": [{"symptom": "<svg onload=alert('svg')>", "why": "<object data=x></object>"}],
        "fix": [{"text": "<b onmouseover=alert('b')>hover</b>", "command": "```\n<script>alert('fence')</script>"}],
        "references": [{"title": "<script>alert('ref')</script>", "url": "https://example.org/r"}],
    })
    corpus = Corpus(root=tmp_path, entries=[hostile], sources={"hostile-entry": tmp_path / "hostile-entry.yaml"})
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("entries", "categories", "xid", "index.md", "data"))
    write_pages(pages(corpus, ROOT), docs)
    config = yaml.safe_load(re.sub(r"!!python/name:\S+", "null", (ROOT / "mkdocs.yml").read_text()))
    config.pop("hooks")
    config.pop("watch")
    config["markdown_extensions"] = [m for m in config["markdown_extensions"] if not (isinstance(m, dict) and "pymdownx.emoji" in m)]
    config["docs_dir"] = str(docs)
    config["theme"]["custom_dir"] = str(ROOT / "overrides")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(tmp_path / "mkdocs.yml"), "-d", str(site)],
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr
    html = (site / "entries" / "hostile-entry" / "index.html").read_text(encoding="utf-8")
    page = parse(html)
    tags = {tag for tag, _ in page.elements}
    assert not tags & {"iframe", "object", "embed"}, tags
    assert not [a for t, a in page.elements if t == "img" and a.get("src") == "x"]
    for tag, attrs in page.elements:
        for name, value in attrs.items():
            assert not name.startswith("on"), f"<{tag} {name}={value}>"
            assert not (value or "").strip().lower().startswith("javascript:"), f"<{tag} {name}={value}>"
    for script in page.inline_scripts:
        assert "alert(" not in script, script
    scripts_with_src = [a["src"] for t, a in page.elements if t == "script" and a.get("src")]
    ours = {f"../../{path}" for path in yaml.safe_load(re.sub(r"!!python/name:\S+", "null", (ROOT / "mkdocs.yml").read_text()))["extra_javascript"]}
    assert scripts_with_src and all(s.startswith("../../assets/") or s in ours for s in scripts_with_src), scripts_with_src
    assert "alert('summary')" in html, "the hostile text is still shown, as text"


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
            assert f'href="../{e.id}/"' in section(other, "See also") or e.id in by_id[other].related
            checked += 1
    assert checked > 20


def test_every_page_carries_a_policy_that_allows_only_its_own_inline_scripts(built_site: Path) -> None:
    from generator.csp import META_MARK, inline_script_hashes

    pages = list(built_site.rglob("*.html"))
    assert len(pages) > 200
    for page in pages:
        html = page.read_text(encoding="utf-8")
        meta = html.split(META_MARK, 1)[1].split(">", 1)[0] if META_MARK in html else ""
        assert "script-src 'self' 'wasm-unsafe-eval'" in meta, page
        assert "'unsafe-inline'" not in meta and "'unsafe-eval'" not in meta
        for digest in inline_script_hashes(html):
            assert digest in meta, (page, digest)
    headers = (built_site / "_headers").read_text(encoding="utf-8")
    assert "Content-Security-Policy: default-src 'self'" in headers


def test_search_index_holds_explanations_not_link_lists_or_patterns(built_site: Path) -> None:
    """Related entries, references, the log box and signature patterns stay out of the index:
    they would make every entry that links to xid-79 a hit for 'fallen off the bus'."""
    import json  # noqa: PLC0415

    docs = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    sections = {d["location"].split("#", 1)[1] for d in docs if d["location"].startswith("entries/") and "#" in d["location"]}
    assert {"root-cause", "fix", "symptoms"} <= sections
    kept_out = {s for s in sections if s in ("related", "references", "check-your-log") or s.startswith(("contained", "sxid"))}
    assert not kept_out, kept_out
    text = " ".join(d["text"] for d in docs)
    assert "Seen in " not in text  # the example lines' source notes sit under the excluded signature headings
