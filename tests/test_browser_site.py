"""The Xid comparison page in a real browser (the search has its own tests: test_browser_search.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser import launch, require_chromium
from site_server import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

@pytest.fixture(scope="module")
def site(built_site: Path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    with SiteServer(built_site) as server, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        yield server, page
        browser.close()


def _codes(page) -> list[int]:
    return [int(c) for c in page.eval_on_selector_all(
        ".kb-xid__table tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.code)")]


def test_xid_table_sorts_filters_compares_and_keeps_state_in_the_url(site) -> None:
    server, page = site
    page.goto(server.url + "/xid/")
    codes = _codes(page)
    assert len(codes) >= 7 and codes == sorted(codes), "numeric order by default"
    page.click(".kb-xid__table th:nth-child(2) button")  # Xid column: descending, numerically
    assert _codes(page) == sorted(codes, reverse=True)
    page.click(".kb-xid__table th:nth-child(11) button")  # severity: info < ... < critical
    ranks = {"info": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
    severities = page.eval_on_selector_all(".kb-xid__table tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.severity)")
    assert [ranks[s] for s in severities] == sorted(ranks[s] for s in severities)

    page.select_option(".kb-xid__origin", "pcie")
    shown = _codes(page)
    assert 79 in shown and 13 not in shown
    page.select_option(".kb-xid__origin", "")
    page.fill(".kb-xid__q", "fallen off")
    assert _codes(page) == [79]
    page.fill(".kb-xid__q", "")

    for code in (48, 79, 94):
        page.check(f".kb-xid__pick[value='{code}']")
    panel = page.locator(".kb-xid__compare")
    assert panel.is_visible()
    header = panel.locator("thead").inner_text()
    assert "Xid 48" in header and "Xid 79" in header and "Xid 94" in header
    assert "RESTART_BM" in panel.inner_text()  # Xid 79's immediate action, side by side with the others
    assert "compare=48%2C79%2C94" in page.url or "compare=48,79,94" in page.url

    page.goto(page.url)  # the same address reopens the same selection and order
    assert page.locator(".kb-xid__compare thead").inner_text() == header
    assert [b.is_checked() for b in page.locator(".kb-xid__pick:checked").all()] == [True, True, True]


def test_compare_allows_at_most_four(site) -> None:
    server, page = site
    page.goto(server.url + "/xid/")
    boxes = page.locator(".kb-xid__pick")
    for i in range(5):
        boxes.nth(i).check() if i < 4 else boxes.nth(i).click()
    assert page.locator(".kb-xid__pick:checked").count() == 4
    assert "at most 4" in page.inner_text(".kb-xid__count")
