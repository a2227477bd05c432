"""Every kind of page as visitors meet it: no script errors, no accessibility violations in light
and dark, tap targets on phones, a 404 that works under a subpath, the site's own chrome."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser import launch, require_chromium
from site_server import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PREFIX = "/gpu-failure-atlas/"  # the path part of site_url in mkdocs.yml: pages are served under it
# one page of every kind the site has
PAGES = ["", "entries/xid-79/", "entries/cuda-out-of-memory/", "xid/", "xid/?compare=48,79,94",
         "categories/", "categories/nccl/", "diagnose/", "search/?q=ncclRemoteError", "data/", "contributing/",
         "entries/no-such-entry/"]
A11Y_PAGES = ["", "entries/xid-79/", "entries/nccl-watchdog-timeout/", "xid/", "xid/?compare=48,79,94",
              "categories/cuda/", "entries/no-such-entry/", "search/?q=xid+79"]


@pytest.fixture(scope="module")
def served(built_site: Path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    with SiteServer(built_site, prefix=PREFIX) as server, sync_playwright() as p:
        browser = launch(p)
        yield server, browser
        browser.close()


def _errors(page) -> list[str]:
    found: list[str] = []
    page.on("pageerror", lambda exc: found.append(f"{page.url}: {exc}"))
    page.on("console", lambda m: found.append(f"{page.url}: {m.text}") if m.type == "error"
            and "404 (File not found)" not in m.text and "status of 404" not in m.text else None)
    return found


def test_no_page_has_a_script_error(served) -> None:
    server, browser = served
    for scheme in ("light", "dark"):
        ctx = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
        page = ctx.new_page()
        errors = _errors(page)
        for path in PAGES:
            page.goto(server.url + "/" + path)
            page.wait_for_load_state("networkidle")
        page.goto(server.url + "/")
        page.focus("#kb-search-q")
        page.keyboard.type("Xid 79")
        page.wait_for_selector(".kb-search__item")
        ctx.close()
        assert not errors, errors


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_violation(served, scheme: str) -> None:
    from axe_playwright_python.sync_playwright import Axe

    server, browser = served
    # axe injects its script with eval, which the site's CSP rightly forbids: this context alone bypasses it
    ctx = browser.new_context(bypass_csp=True, color_scheme=scheme, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    found = {}
    for path in A11Y_PAGES:
        page.goto(server.url + "/" + path)
        page.wait_for_load_state("networkidle")
        if path.startswith("search/"):
            page.wait_for_selector(".kb-search-page__results .kb-search__item")
        violations = Axe().run(page).response["violations"]
        if violations:
            found[path or "home"] = {v["id"]: [n["target"] for n in v["nodes"]][:4] for v in violations}
    # the log doctor with a report on show
    page.goto(server.url + "/diagnose/")
    page.locator(".kb-doctor textarea").fill("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    page.locator(".kb-doctor button", has_text="Diagnose").click()
    page.wait_for_selector(".kb-doctor[data-state=done]", timeout=90_000)
    # the header's title fades in when the report scrolls into view: judge colours once it has settled
    page.wait_for_function("""() => [...document.querySelectorAll('.md-header__topic')]
        .every((t) => ['0', '1'].includes(getComputedStyle(t).opacity))""", timeout=10_000)
    page.wait_for_timeout(300)
    violations = Axe().run(page).response["violations"]
    if violations:
        found["diagnose with a report"] = {v["id"]: [n["target"] for n in v["nodes"]][:4] for v in violations}
    # the header's search results open over the page
    page.goto(server.url + "/")
    page.focus("#kb-search-q")
    page.keyboard.type("ncclRemoteError")
    page.wait_for_selector(".kb-search__item")
    violations = Axe().run(page).response["violations"]
    if violations:
        found["search results"] = {v["id"]: [n["target"] for n in v["nodes"]][:4] for v in violations}
    ctx.close()
    assert not found, found


def test_tap_targets_on_a_phone_are_at_least_44_px(served) -> None:
    server, browser = served
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = ctx.new_page()
    small = []
    for path in ["", "entries/xid-79/", "diagnose/", "categories/cuda/", "search/?q=xid", "entries/no-such-entry/"]:
        page.goto(server.url + "/" + path)
        small += page.evaluate("""() => {
          const out = [];
          for (const n of document.querySelectorAll('a[href], button, input, select, textarea, summary, label[for]')) {
            const r = n.getBoundingClientRect();
            if (!r.width || !r.height || getComputedStyle(n).visibility === 'hidden') continue;
            // links inside running text are exempt (WCAG 2.5.8), and so is a label whose control is itself the target
            if (n.tagName === 'A' && n.closest('p, li, td, small') && !n.closest('nav, .md-footer, .kb-search')) continue;
            if (n.tagName === 'LABEL') continue;
            if (r.height < 44 || r.width < 44) out.push(`${location.pathname}: ${n.tagName}.${n.className} ${Math.round(r.width)}x${Math.round(r.height)}`);
          }
          return out; }""")
    ctx.close()
    assert not small, small[:20]


def test_the_404_page_works_under_the_sites_subpath(served) -> None:
    server, browser = served
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors = _errors(page)
    response = page.goto(server.url + "/entries/xid-79x/")
    assert response.status == 404
    # the theme's styles and our own loaded from the subpath: the header wears the atlas's green
    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).backgroundColor") == "rgb(46, 107, 48)"
    assert page.locator("h1").inner_text() == "Page not found"
    # a search pre-filled from the missing address finds what was meant
    page.wait_for_selector(".kb-search-page__results .kb-search__link")
    assert page.input_value("#kb-search-page-q") == "xid 79x"
    assert page.locator(".kb-search-page__results .kb-search__link").first.get_attribute("data-id") == "xid-79"
    page.click("text=Log doctor")
    page.wait_for_url("**" + PREFIX + "diagnose/")
    page.go_back()
    page.click("text=Every Xid code side by side")
    page.wait_for_url("**" + PREFIX + "xid/")
    ctx.close()
    assert not errors, errors
