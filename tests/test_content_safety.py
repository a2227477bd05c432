"""Hostile entry text: no script runs, whichever layer is bypassed, and none leans on the CSP.

Three layers (generator/corpus/safety.py): validation refuses the text, rendering escapes it, and the
build's page guard refuses any page that would still hold live markup. Here each attack of
issue 11 goes through rendering with validation bypassed, is built by MkDocs with the site's
Markdown extensions (attr_list included), and is then loaded in Chromium *without* any
Content-Security-Policy while the test listens for dialogs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, mkdocs_config
from generator.corpus.validated import Corpus
from generator.corpus.model import Entry, Reference
from generator.site.page_guard import UnsafePage, check, problems
from generator.site.render import pages, write_pages
from html_scan import parse

pytestmark = pytest.mark.slow

# Every attack of issue 11 (and the older ones), each with its own alert text.
PROSE = {
    "summary": "<script>alert('summary')</script> <img src=x onerror=alert('img')>",
    "root_cause": "[click](javascript:alert('link')) <iframe src=javascript:alert('frame')></iframe>",
    "mechanism": ("<a href='javascript:alert(1)' onclick=alert('click')>x</a> `<script>kept as code</script>`\n\n"
                  "Escaped backticks are no code: \\`<script>alert('escaped')</script>\\` nor is a span\n"
                  "that opens `here\n\n<img src=x onerror=alert('paragraph')> and closes` in another paragraph."),
    "at_scale": ("A paragraph with an attribute list\n{: onclick=\"alert('attr')\" }\n\n"
                 "[a link](https://example.org/){: href=\"javascript:alert('attr-href')\" onmouseover=\"alert('attr2')\" }\n\n"
                 "![remote](https://evil.example/pixel.png) and ![also](//evil.example/p.png)"),
    "notes": "<svg onload=alert('svg')> <object data=x></object> [x]: javascript:alert('ref')\n\n[ref][x]",
}


def _hostile_entry() -> Entry:
    entry = Entry.model_validate({
        "id": "hostile-entry", "title": "Hostile <script>alert('title')</script>", "category": "cuda",
        "severity": "high", "owner": "application",
        **PROSE,
        "symptoms": [{"symptom": "<svg onload=alert('svg2')>", "why": "<object data=x></object>"}],
        "fix": [{"text": "<b onmouseover=alert('b')>hover</b>", "command": "```\n<script>alert('fence')</script>"}],
        "references": [{"title": "<script>alert('ref')</script>", "url": "https://example.org/r"}],
    })
    # URLs that validation refuses now, put back with validation bypassed
    breakout = "https://docs.nvidia.com/x)<script>alert('url')</script>"
    entry.references.append(Reference.model_construct(title="Breakout", url=breakout))
    entry.references.append(Reference.model_construct(title="Quote", url='https://example.org/"onmouseover="alert(\'q\')'))
    return entry


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    corpus = Corpus(root=tmp, entries=[_hostile_entry()], sources={"hostile-entry": tmp / "hostile-entry.yaml"})
    docs = tmp / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("entries", "categories", "xid", "index.md", "data"))
    write_pages(pages(corpus, ROOT), docs)
    config = mkdocs_config()
    config.pop("hooks")  # no validation, no page guard, no CSP: the renderer alone must hold
    config.pop("watch")
    config["markdown_extensions"] = [m for m in config["markdown_extensions"] if not (isinstance(m, dict) and "pymdownx.emoji" in m)]
    assert "attr_list" in config["markdown_extensions"]
    config["docs_dir"] = str(docs)
    config["theme"]["custom_dir"] = str(ROOT / "overrides")
    (tmp / "mkdocs.yml").write_text(yaml.safe_dump(config))
    site = tmp / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(tmp / "mkdocs.yml"), "-d", str(site)],
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr
    return site


def test_rendered_hostile_entry_holds_no_live_markup(hostile_site: Path) -> None:
    html = (hostile_site / "entries" / "hostile-entry" / "index.html").read_text(encoding="utf-8")
    assert problems(html) == [], problems(html)
    page = parse(html)
    assert not {tag for tag, _ in page.elements} & {"iframe", "object", "embed"}
    for tag, attrs in page.elements:
        for name, value in attrs.items():
            assert not name.startswith("on"), f"<{tag} {name}={value}>"
            assert not (value or "").strip().lower().startswith(("javascript:", "data:text")), f"<{tag} {name}={value}>"
        if tag == "img":
            assert not re.match(r"(?i)(https?:)?//", attrs.get("src") or ""), attrs
    for script in page.inline_scripts:
        assert "alert(" not in script, script
    ours = {"../../javascripts/md-state.js", "../../javascripts/md-palette.js"} | {
        f"../../{path}" for path in mkdocs_config()["extra_javascript"]}
    srcs = [a["src"] for t, a in page.elements if t == "script" and a.get("src")]
    assert srcs and all(s.startswith("../../assets/") or s in ours for s in srcs), srcs
    assert "alert('summary')" in html and "alert('escaped')" in html, "the hostile text is still shown, as text"
    assert "docs.nvidia.com/x%29%3Cscript%3E" in html  # the breakout URL stays one inert link


@pytest.mark.browser
def test_no_dialog_opens_on_the_hostile_page_even_without_a_csp(hostile_site: Path) -> None:
    from browser import launch, require_chromium
    from playwright.sync_api import sync_playwright
    from site_server import SiteServer

    require_chromium()
    (hostile_site / "_headers").unlink(missing_ok=True)  # no policy header, and the pages carry no meta policy
    html = (hostile_site / "entries" / "hostile-entry" / "index.html").read_text(encoding="utf-8")
    assert "Content-Security-Policy" not in html
    dialogs: list[str] = []
    with SiteServer(hostile_site) as server, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(server.url + "/entries/hostile-entry/")
        page.wait_for_load_state("load")
        for selector in ("a", "b", "p", "img", "svg"):  # hover and click whatever a handler could sit on
            for el in page.query_selector_all(f"article {selector}")[:30]:
                try:
                    el.hover(timeout=500)
                except Exception:  # noqa: BLE001 - hidden or detached elements
                    pass
        for link in page.query_selector_all("article a[href^='#unsafe'], article a[href*='javascript']"):
            link.click(timeout=1000)
        page.wait_for_timeout(300)
        browser.close()
    assert dialogs == []


HOSTILE_PAGES = [
    '<p>x</p><script>alert(1)</script>',
    '<p title=">"><a onclick=alert(1)>x</a></p>',
    '<a href="JaVa&#115;cript:alert(1)">x</a>',
    '<a href="java\nscript:alert(1)">x</a>',
    '<img src="https://evil.example/p.png">',
    '<iframe src="x"></iframe>',
    '<svg><a xlink:href="javascript:alert(1)">x</a></svg>',
]


@pytest.mark.parametrize("html", HOSTILE_PAGES)
def test_the_page_guard_refuses_live_markup(html: str) -> None:
    with pytest.raises(UnsafePage, match=r"^entries/x\.md: the built page holds"):
        check("<html><body>" + html + "</body></html>", "entries/x.md")


@pytest.mark.parametrize("html", ['<pre><code>onclick=alert(1) javascript:x &lt;script&gt;</code></pre>',
                                  '<script src="../assets/x.js"></script><script id="__config" type="application/json">{}</script>',
                                  '<a href="../xid-79/">x</a> <a href="https://docs.nvidia.com/">d</a> <img src="../img/a.png">'])
def test_the_page_guard_passes_what_the_site_really_holds(html: str) -> None:
    assert problems(html) == []


def test_a_build_with_a_hostile_page_fails_with_the_guard_message(tmp_path: Path) -> None:
    """A hand-written page with raw HTML gets past validation (it is no entry): the guard stops the build."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("entries", "categories", "xid", "index.md", "data"))
    (docs / "evil.md").write_text("# Evil\n\n<img src=x onerror=\"alert('guard')\">\n", encoding="utf-8")
    config = (ROOT / "mkdocs.yml").read_text().replace("docs_dir: docs", f"docs_dir: {docs}")
    config = config.replace("hooks:\n  - generator/site/mkdocs_hook.py", f"hooks:\n  - {ROOT / 'generator' / 'site' / 'mkdocs_hook.py'}")
    config = config.replace("custom_dir: overrides", f"custom_dir: {ROOT / 'overrides'}")
    config = config.replace("  - kb/entries\n  - generator/site/templates", f"  - {ROOT / 'kb' / 'entries'}")
    (tmp_path / "mkdocs.yml").write_text(config)
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(tmp_path / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode != 0
    assert "evil.md: the built page holds an event handler (onerror)" in proc.stderr
    assert "Traceback" not in proc.stderr
