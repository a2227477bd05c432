"""The Xid comparison page in a real browser (the search has its own tests: test_browser_search.py).

Every page opened here listens for script errors ('pageerror' and console errors) and fails
the test on any. Layouts are checked at a laptop's 1280 px and a phone's 390 px, in the light
and the dark scheme where colour matters.
"""

from __future__ import annotations

import contextlib
import statistics
from pathlib import Path

import pytest

from browser import launch, require_chromium
from site_server import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser_and_server(built_site: Path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    with SiteServer(built_site) as server, sync_playwright() as p:
        browser = launch(p)
        yield browser, server
        browser.close()


@pytest.fixture
def open_page(browser_and_server):
    """open_page(path, viewport=LAPTOP, scheme="light") -> page; fails the test on a script error."""
    browser, server = browser_and_server
    contexts, errors = [], []

    def opener(path: str, viewport: dict = LAPTOP, scheme: str = "light", **options):
        ctx = browser.new_context(viewport=viewport, color_scheme=scheme, **options)
        contexts.append(ctx)
        page = ctx.new_page()
        page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
        page.on("console", lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None)
        page.goto(server.url + path)
        page.wait_for_selector(".kb-xid[data-mounted]")
        return page

    yield opener
    for ctx in contexts:
        with contextlib.suppress(Exception):
            ctx.close()
    assert not errors, errors


def _codes(page) -> list[int]:
    return [int(c) for c in page.eval_on_selector_all(
        ".kb-xid__table tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.code)")]


def _compare_ready(page, n: int) -> None:
    # a function, not an expression: Playwright polls an expression with eval(), which the
    # site's CSP refuses; the wait then fails whenever the panel is not ready at the first look
    page.wait_for_function(f"() => document.querySelectorAll('.kb-xid__compare thead th a').length === {n}")


def test_xid_table_sorts_filters_compares_and_keeps_state_in_the_url(open_page) -> None:
    page = open_page("/xid/")
    codes = _codes(page)
    assert len(codes) >= 7 and codes == sorted(codes), "numeric order by default"
    page.click(".kb-xid__table th[data-key=code] button")  # Xid column: descending, numerically
    assert _codes(page) == sorted(codes, reverse=True)
    page.click(".kb-xid__table th[data-key=severity] button")  # severity: info < ... < critical
    ranks = {"info": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
    severities = page.eval_on_selector_all(".kb-xid__table tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.severity)")
    assert [ranks[s] for s in severities] == sorted(ranks[s] for s in severities)
    assert "sort=severity%3Aasc" in page.url or "sort=severity:asc" in page.url

    page.select_option(".kb-xid__origin", "pcie")
    shown = _codes(page)
    assert 79 in shown and 13 not in shown
    assert page.inner_text(".kb-xid__count") == f"{len(shown)} of {len(codes)} codes"
    page.select_option(".kb-xid__origin", "")
    page.select_option(".kb-xid__severity", "critical")
    assert 79 in _codes(page) and 94 not in _codes(page)
    page.select_option(".kb-xid__severity", "")
    page.select_option(".kb-xid__action", "RESTART_BM")
    assert 79 in _codes(page) and 48 not in _codes(page)
    page.select_option(".kb-xid__action", "")
    page.fill(".kb-xid__q", "fallen off")
    assert _codes(page) == [79]
    page.fill(".kb-xid__q", "")

    for code in (48, 79, 94):
        page.check(f".kb-xid__pick[value='{code}']")
    _compare_ready(page, 3)
    panel = page.locator(".kb-xid__compare")
    assert panel.is_visible()
    header = panel.locator("thead").inner_text()
    assert "Xid 48" in header and "Xid 79" in header and "Xid 94" in header
    assert "RESTART_BM" in panel.inner_text()  # Xid 79's immediate action, side by side with the others
    assert "compare=48%2C79%2C94" in page.url or "compare=48,79,94" in page.url

    page.goto(page.url)  # the same address reopens the same selection and order
    _compare_ready(page, 3)
    assert page.locator(".kb-xid__compare thead").inner_text() == header
    assert [b.is_checked() for b in page.locator(".kb-xid__pick:checked").all()] == [True, True, True]
    severities = page.eval_on_selector_all(".kb-xid__table tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.severity)")
    assert [ranks[s] for s in severities] == sorted(ranks[s] for s in severities)

    page.click(".kb-xid__chip[aria-label='Remove Xid 79 from the comparison']")
    _compare_ready(page, 2)
    assert not page.is_checked(".kb-xid__pick[value='79']")
    assert "compare=48%2C94" in page.url or "compare=48,94" in page.url


def test_compare_allows_at_most_four(open_page) -> None:
    page = open_page("/xid/")
    boxes = page.locator(".kb-xid__pick")
    for i in range(5):
        boxes.nth(i).check() if i < 4 else boxes.nth(i).click()
    assert page.locator(".kb-xid__pick:checked").count() == 4
    assert "at most 4" in page.inner_text(".kb-xid__count")


# ---- layout: everything within the screen's width, no token broken -------------------------------------

OVERFLOW = """root => {
  const width = document.documentElement.clientWidth;
  const out = [];
  if (document.documentElement.scrollWidth > width) out.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  for (const node of [root, ...root.querySelectorAll("*")]) {
    if (!node.getClientRects().length) continue;
    const box = node.getBoundingClientRect();
    if (box.right > width + 1 || box.left < -1) out.push(`${node.tagName}.${node.className} spans ${box.left}..${box.right}`);
    if (node.scrollWidth > node.clientWidth + 1 && getComputedStyle(node).overflowX !== "visible") out.push(`${node.tagName}.${node.className} scrolls sideways`);
    if (out.length > 8) break;
  }
  return out;
}"""

# where the text of each element breaks across lines: the characters just before each break
BREAKS = """(nodes) => nodes.filter((n) => n.getClientRects().length).map((node) => {
  const range = document.createRange();
  const text = node.textContent;
  const chars = [];
  let offset = 0, lastTop = null;
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    for (let i = 0; i < t.data.length; i++) {
      range.setStart(t, i); range.setEnd(t, i + 1);
      const rect = range.getClientRects()[0];
      if (rect && lastTop !== null && rect.top > lastTop + 2) chars.push(text.slice(Math.max(0, offset - 3), offset + 3));
      if (rect) lastTop = rect.top;
      offset++;
    }
  }
  return [text, chars];
}).filter(([, chars]) => chars.length)"""


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280px", "390px"])
def test_the_table_fits_the_screen_and_never_breaks_a_code(open_page, viewport) -> None:
    page = open_page("/xid/", viewport)
    assert page.eval_on_selector(".kb-xid", OVERFLOW) == []
    width = page.eval_on_selector(".kb-xid__table", "t => t.getBoundingClientRect().width")
    assert width >= viewport["width"] * 0.85, f"the table should use the page's width, it has {width}px"
    if viewport is LAPTOP:
        assert not page.locator(".md-sidebar--primary .md-nav__link").first.is_visible(), "side navigation hidden here"
        heights = page.eval_on_selector_all(".kb-xid__table tbody tr", "rows => rows.map(r => r.getBoundingClientRect().height)")
        assert statistics.median(heights) <= 120, f"rows are {statistics.median(heights)}px tall (median)"
    # only the main columns; the rest is in each row's details
    headings = page.eval_on_selector_all(".kb-xid__table thead th", "ths => ths.map(th => th.textContent)")
    assert not [h for h in headings if any(w in h for w in ("Investigatory", "GPUs", "Operators", "Origin"))], headings
    details = page.locator("tr[data-code='79'] details")
    details.locator("summary").click()
    assert "Investigatory action" in details.inner_text() and "Kubernetes device plugin" in details.inner_text()
    assert page.eval_on_selector(".kb-xid", OVERFLOW) == []
    # Xid numbers stay on one line; mnemonics and actions break only after "_" or at a space
    codes = page.eval_on_selector_all(".kb-xid__table tbody td.kb-xid__c-code a", BREAKS)
    assert codes == [], codes[:5]
    broken = page.eval_on_selector_all(".kb-xid__table code", BREAKS)
    bad = [(text, chars) for text, chars in broken if any(c[2] not in "_ " for c in chars)]
    assert bad == [], bad[:5]


def test_meanings_show_code_not_backticks(open_page) -> None:
    page = open_page("/xid/?compare=4,50")
    _compare_ready(page, 2)
    meanings = page.eval_on_selector_all(".kb-xid__table tbody td:nth-child(4)", "ms => ms.map(m => m.textContent)")
    assert len(meanings) == len(_codes(page)) and not [m for m in meanings if "`" in m]
    assert page.locator("tr[data-code='50'] .kb-xid__meaning code").first.inner_text().startswith("SILENT_RUNNING")
    assert "`" not in page.inner_text(".kb-xid__compare")
    assert page.locator(".kb-xid__compare td code", has_text="ROBUST_CHANNEL_FIFO_ERROR_CHANNEL_BUSY").count() >= 1


# ---- the comparison -------------------------------------------------------------------------------------

@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280px", "390px"])
def test_compare_side_by_side_on_a_laptop_stacked_on_a_phone(open_page, viewport) -> None:
    page = open_page("/xid/?compare=48,79,94,119", viewport)
    _compare_ready(page, 4)
    assert page.eval_on_selector(".kb-xid", OVERFLOW) == []
    boxes = page.eval_on_selector_all(".kb-xid__compare tbody tr:first-child td",
                                      "tds => tds.map(td => { const b = td.getBoundingClientRect(); return [b.left, b.top]; })")
    assert len(boxes) == 4
    if viewport is LAPTOP:
        assert len({round(top) for _, top in boxes}) == 1, "side by side: one line"
        assert [left for left, _ in boxes] == sorted({left for left, _ in boxes}), "side by side: four columns"
    else:
        assert len({round(left) for left, _ in boxes}) == 1, "stacked: one column"
        assert [top for _, top in boxes] == sorted({top for _, top in boxes})
    # a field where the codes differ carries a label and a bold marker, one where they agree neither
    marks = page.eval_on_selector_all(".kb-xid__compare tbody tr", """rows => rows.map(tr => {
        const th = tr.querySelector("th"), s = getComputedStyle(tr), t = getComputedStyle(th);
        const inset = /inset\\s+(\\d+(?:\\.\\d+)?)px/.exec(t.boxShadow) || /(\\d+(?:\\.\\d+)?)px\\s+0px\\s+0px\\s+0px\\s+inset/.exec(t.boxShadow);
        const marker = Math.max(parseFloat(s.borderLeftWidth) * (s.borderLeftColor !== "rgba(0, 0, 0, 0)" ? 1 : 0),
                                parseFloat(t.borderLeftWidth), inset ? parseFloat(inset[1]) : 0);
        return [th.textContent, tr.classList.contains("kb-xid__differs"), marker,
                !!th.querySelector(".kb-xid__differs-tag") && th.querySelector(".kb-xid__differs-tag").offsetWidth > 0];
    })""")
    differing = [m for m in marks if m[1]]
    assert differing and all(m[3] and "differs" in m[0] and m[2] >= 4 for m in differing), marks
    page.goto(page.url.split("?")[0] + "?compare=128,129")  # copy engines 12 and 13: same action, same origin
    _compare_ready(page, 2)
    same = page.eval_on_selector_all(".kb-xid__compare tbody tr:not(.kb-xid__differs) th", "ths => ths.map(th => th.textContent)")
    assert same and not [t for t in same if "differs" in t]


def test_a_tick_is_never_lost_and_never_moves_the_page(open_page) -> None:
    page = open_page("/xid/")
    page.fill(".kb-xid__q", "memory")
    page.locator(".kb-xid__pick[value='48']").click()  # the search box loses focus on this very click
    assert page.is_checked(".kb-xid__pick[value='48']"), "the first click after typing must tick the box"
    page.fill(".kb-xid__q", "")
    page.locator(".kb-xid__pick[value='48']").click()
    assert not page.is_checked(".kb-xid__pick[value='48']")

    # tick codes far down the table: the box under the pointer stays where it was
    for code in (94, 95, 119):
        box = page.locator(f".kb-xid__pick[value='{code}']")
        box.evaluate("b => b.scrollIntoView({ block: 'center' })")
        before = box.bounding_box()["y"], page.evaluate("scrollY")
        box.click()
        page.wait_for_timeout(150)  # the comparison loads xid.json on first use
        after = box.bounding_box()["y"], page.evaluate("scrollY")
        assert box.is_checked()
        assert abs(after[0] - before[0]) <= 2 and after[1] >= before[1], (code, before, after)
    _compare_ready(page, 3)
    assert page.locator(".kb-xid__tray").is_visible()
    page.click(".kb-xid__tray button:has-text('Show comparison')")
    page.wait_for_timeout(100)
    assert page.eval_on_selector(".kb-xid__compare", "p => p.getBoundingClientRect().top") < 200


# ---- accessibility --------------------------------------------------------------------------------------

CONTRAST = """root => {
  const parse = (c) => { const m = c.match(/[\\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
  const over = (top, base) => ({ r: top.r * top.a + base.r * (1 - top.a), g: top.g * top.a + base.g * (1 - top.a),
                                 b: top.b * top.a + base.b * (1 - top.a), a: 1 });
  const background = (node) => {
    const layers = [];
    for (let n = node; n; n = n.parentElement) {
      const c = parse(getComputedStyle(n).backgroundColor);
      if (c.a > 0) layers.push(c);
      if (c.a >= 1) break;
    }
    let bg = { r: 255, g: 255, b: 255, a: 1 };
    for (const layer of layers.reverse()) bg = over(layer, bg);
    return bg;
  };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
                       return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const out = [];
  for (const node of root.querySelectorAll("*")) {
    const own = Array.from(node.childNodes).some((t) => t.nodeType === 3 && t.data.trim());
    if (!own || !node.getClientRects().length || getComputedStyle(node).visibility === "hidden") continue;
    const bg = background(node), fg = over(parse(getComputedStyle(node).color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    if (ratio < 4.5) out.push(`${node.tagName}.${node.className} "${node.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)}:1`);
  }
  return Array.from(new Set(out)).slice(0, 10);
}"""

TARGETS = """root => Array.from(root.querySelectorAll(".kb-xid__pick-label, button, summary, select, input[type=search], .kb-xid__compare thead a"))
  .filter((n) => n.getClientRects().length)
  .map((n) => { const b = n.getBoundingClientRect(); return [n.className || n.tagName, b.width, b.height]; })
  .filter(([, w, h]) => h < 44 || w < 44)"""

UNLABELLED = """root => Array.from(root.querySelectorAll("input, select, button, summary"))
  .filter((n) => !(n.getAttribute("aria-label") || (n.labels && Array.from(n.labels).some((l) => l.textContent.trim())) || n.textContent.trim()))
  .map((n) => n.outerHTML.slice(0, 80))"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_page_is_accessible_in_both_schemes(open_page, scheme) -> None:
    from axe_playwright_python.sync_playwright import Axe

    for viewport in (LAPTOP, PHONE):
        # axe injects its script with eval, which the site's CSP rightly forbids: this context alone bypasses it
        page = open_page("/xid/?compare=48,79,94,119", viewport, scheme, bypass_csp=True)
        _compare_ready(page, 4)
        assert page.get_attribute("body", "data-md-color-scheme") == ("slate" if scheme == "dark" else "default")
        if page.locator("tr[data-code='79'] summary").count():
            page.locator("tr[data-code='79'] summary").click()  # a row's details open too
        assert page.eval_on_selector(".kb-xid", CONTRAST) == []
        assert page.eval_on_selector(".kb-xid", UNLABELLED) == []
        if viewport is PHONE:
            assert page.eval_on_selector(".kb-xid", TARGETS) == []
        # the page's own content: the article (the theme's header and footer are not this page's)
        found = Axe().run(page, context={"include": [["article.md-content__inner"]]}).response["violations"]
        assert not found, [(v["id"], [n["target"] for n in v["nodes"]][:4]) for v in found]
