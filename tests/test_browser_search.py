"""The site search in a real browser: pasted log lines and typed words find their entry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from browser import launch, require_chromium
from site_server import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
QUERIES = yaml.safe_load((ROOT / "tests" / "fixtures" / "search" / "queries.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def site(built_site: Path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    with SiteServer(built_site) as server, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        yield server, page, errors
        browser.close()


def _index_url(page) -> str:
    return page.eval_on_selector(".kb-search", "node => node.dataset.index")


def test_the_query_set_is_real_and_large_enough() -> None:
    pasted = [q for q in QUERIES if q.get("source")]
    assert len(pasted) >= 30 and all(q["source"].startswith("https://") for q in pasted)
    assert any(len(q["query"].split()) <= 2 and not q.get("source") for q in QUERIES)


def test_every_query_finds_its_entry_in_the_top_three(site) -> None:
    server, page, errors = site
    page.goto(server.url + "/")
    tops = page.evaluate("""async ([url, queries]) => {
        const index = await kbSearch.load(url);
        return queries.map(q => index.search(q, 3).filter(h => h.entry).map(h => h.entry.i));
    }""", [_index_url(page), [q["query"] for q in QUERIES]])
    misses = [f"{q['query'][:100]!r}: expected {q['expected']}, got {top}"
              for q, top in zip(QUERIES, tops) if not set(q["expected"]) & set(top)]
    assert not misses, "\n".join(misses)
    assert not errors


def test_signature_patterns_run_in_the_browser_as_in_python(site) -> None:
    """Every pattern compiles as a JavaScript RegExp, matches its own examples and no counter-example."""
    from generator.corpus.validated import load_corpus

    server, page, _ = site
    corpus = load_corpus(Path(os.environ.get("KB_ENTRIES") or ROOT / "kb" / "entries"))  # what the site was built from
    cases = [[s.pattern, [x.line for x in s.examples], list(s.counter_examples), f"{e.id}/{s.id}"]
             for e in corpus.entries for s in e.signatures]
    page.goto(server.url + "/")
    problems = page.evaluate("""(cases) => {
        const out = [];
        for (const [pattern, examples, counters, where] of cases) {
            const re = kbSearch.toRegExp(pattern, false);
            if (!re) { out.push(`${where}: does not compile`); continue; }
            for (const line of examples) if (!re.test(line)) out.push(`${where}: misses its example ${line.slice(0, 80)}`);
            for (const line of counters) if (re.test(line)) out.push(`${where}: matches its counter-example ${line.slice(0, 80)}`);
        }
        return out;
    }""", cases)
    assert len(cases) > 500 and not problems, "\n".join(problems)


def test_no_page_loads_the_index_until_the_box_is_used(site) -> None:
    server, page, errors = site
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(server.url + "/entries/xid-79/")
    page.wait_for_load_state("networkidle")
    assert not [u for u in requested if "/assets/search/" in u or "search_index" in u]
    page.focus("#kb-search-q")
    page.wait_for_load_state("networkidle")
    assert [u for u in requested if "/assets/search/index." in u]
    assert not errors


def test_typing_shows_results_and_the_keyboard_opens_one(site) -> None:
    server, page, errors = site
    page.goto(server.url + "/categories/")
    page.keyboard.press("/")  # the shortcut focuses the box
    assert page.evaluate("document.activeElement.id") == "kb-search-q"
    # a hyphenated word followed by a colon: the query lunr used to reject
    page.keyboard.type("nvidia-container-cli: initialization error: nvml error: driver not loaded")
    page.wait_for_selector(".kb-search__item")
    first = page.locator(".kb-search__item").first
    assert first.get_attribute("aria-selected") == "true"
    assert "log line recognised" in first.inner_text()
    page.keyboard.press("ArrowDown")
    assert page.locator(".kb-search__item").nth(1).get_attribute("aria-selected") == "true"
    second = page.locator(".kb-search__item").nth(1).locator(".kb-search__link").get_attribute("data-id")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/entries/{second}/")
    page.keyboard.press("/")
    page.keyboard.type("zzzzqqq xqxqxq")
    page.wait_for_selector(".kb-search__status a[href$='diagnose/']")
    page.keyboard.press("Escape")
    assert page.locator(".kb-search__panel").is_hidden()
    assert not errors


def test_a_pasted_line_no_entry_recognises_is_said_to_be_a_guess(site) -> None:
    """A generic line (npm's exit summary) lists entries that only share words with it; the
    status says so and offers the doctor. Recognised lines and typed words keep the plain count."""
    server, page, errors = site
    page.goto(server.url + "/")
    verdicts = page.evaluate("""async ([url, queries]) => {
        const index = await kbSearch.load(url);
        return queries.map(q => kbSearch.weak(index.search(q, 10), q));
    }""", [_index_url(page), ["npm ERR! code ELIFECYCLE errno 1",
                              # an unrelated line that shares a word or two with an entry ('fatal')
                              "fatal: unable to access repository: Could not resolve host: github.com",
                              "RuntimeError: CUDA error: an illegal memory access was encountered",
                              "nccl timeout", "xid 79"]])
    # ('Job for docker.service failed because the control process exited with error code.' was a
    # third example: its best entry scores 40.03 with 1,435 entries, on the line WEAK_SCORE draws,
    # so any entry added or removed flips it; a fixed example must sit clear of the line)
    assert verdicts == [True, True, False, False, False]
    page.fill("#kb-search-q", "npm ERR! code ELIFECYCLE errno 1")
    page.wait_for_selector(".kb-search__item")
    status = page.locator(".kb-search__status")
    assert status.inner_text().startswith("No entry recognises this line; these only share words with it.")
    assert status.locator("a[href$='diagnose/']").count() == 1
    page.fill("#kb-search-q", "RuntimeError: CUDA error: an illegal memory access was encountered")
    page.wait_for_selector(".kb-search__item >> text=log line recognised")
    assert "No entry recognises" not in status.inner_text()
    assert not errors


def test_a_crash_line_finds_its_entry_and_gives_way_to_the_failure_it_follows(site) -> None:
    """A line that only says a process died, PyTorch's hint after a CUDA error, or a build's summary
    ('make: *** [...] Error 2'), finds the entry that explains it; pasted with the line that names
    the failure, that failure comes first (a wrapper entry gives way, as the log doctor makes it
    collateral)."""
    server, page, errors = site
    page.goto(server.url + "/")
    cut_thrust = (ROOT / "tests/fixtures/field/dev/cases/cuda-2909.log").read_text(encoding="utf-8")
    queries = [
        "Segmentation fault (core dumped)",  # github.com/ZQPei/deep_sort_pytorch/issues/69
        "Fatal Python error: Aborted",  # github.com/ContinuumIO/anaconda-issues/issues/11446
        "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.",
        # github.com/kohjingyu/gill/issues/39, the error with the hint PyTorch adds to it
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
        cut_thrust,  # 'terminate called after throwing ...' then what(): cudaErrorIllegalAddress
        # the kernel-module target's summary names the nvidia module build (it is one in 4 of 4 dev logs)
        "make: *** [Makefile:81: modules] Error 2",  # github.com/NVIDIA/open-gpu-kernel-modules/issues/558
        "make: *** [all] Error 2",  # github.com/NVIDIA/nvbandwidth/issues/25, a build's summary alone
        # github.com/NVIDIA/nvbandwidth/issues/25: the compiler's error, then make's summaries of it
        "nvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
        "make[2]: *** [CMakeFiles/nvbandwidth.dir/kernels.cu.o] Error 1\n"
        "make: *** [all] Error 2",
    ]
    tops = page.evaluate("""async ([url, queries]) => {
        const index = await kbSearch.load(url);
        return queries.map(q => index.search(q, 10).filter(h => h.entry).slice(0, 2).map(h => h.entry.i));
    }""", [_index_url(page), queries])
    assert [top[0] for top in tops] == ["host-process-segfault", "host-process-aborted", "torch-cuda-error-async-hint",
                                        "cuda-no-kernel-image", "cuda-illegal-memory-access", "driver-dkms-build-failed",
                                        "build-tool-step-failed", "cuda-extension-build-failure"]
    assert tops[3][1] == "torch-cuda-error-async-hint" and tops[4][1] == "host-process-aborted"
    assert tops[7][1] == "build-tool-step-failed" and tops[5][1] == "build-tool-step-failed"
    assert not errors


def test_the_search_page_takes_the_query_from_the_address(site) -> None:
    server, page, errors = site
    page.goto(server.url + "/search/#q=" + "Xid%2079")
    page.wait_for_selector(".kb-search-page__results .kb-search__item")
    first = page.locator(".kb-search-page__results .kb-search__link").first
    assert first.get_attribute("data-id") == "xid-79"
    page.fill(".kb-search-page__input", "ncclRemoteError")
    page.wait_for_function("() => location.hash.includes('ncclRemoteError')")
    assert page.evaluate("location.search") == ""  # the query lives in the fragment only
    assert page.locator(".kb-search-page__results .kb-search__link").first.get_attribute("data-id") == "nccl-remote-error"
    # a link made before, with ?q=: read, then moved to the fragment
    page.goto(server.url + "/search/?q=" + "Xid%2079")
    page.wait_for_selector(".kb-search-page__results .kb-search__item")
    assert page.locator(".kb-search-page__results .kb-search__link").first.get_attribute("data-id") == "xid-79"
    assert page.evaluate("[location.search, decodeURIComponent(location.hash)]") == ["", "#q=Xid+79"]
    assert not errors


def test_no_request_carries_what_was_pasted_into_the_search(site) -> None:
    """A pasted line holds host names, users, job ids: neither the header box's Enter (no result),
    nor typing on the search page, nor following a result may send it to the server, in a URL or
    in a Referer header."""
    server, page, errors = site
    secret = "qqzzxvk SECRETTOKEN9f8e7d"  # shares no word with any entry: Enter goes to the search page
    sent: list[str] = []

    def record(request) -> None:
        sent.append(request.url + " " + " ".join(f"{k}={v}" for k, v in request.headers.items()))

    page.on("request", record)
    try:
        page.goto(server.url + "/entries/xid-79/")
        page.fill("#kb-search-q", secret)
        page.wait_for_function("() => document.querySelector('.kb-search__status').textContent.includes('Nothing')")
        page.press("#kb-search-q", "Enter")
        page.wait_for_url("**/search/#q=*")
        page.wait_for_selector(".kb-search-page__status")
        assert page.input_value(".kb-search-page__input") == secret
        page.fill(".kb-search-page__input", "Xid 79 " + secret)
        page.wait_for_function("() => location.hash.includes('SECRETTOKEN')")
        link = page.locator(".kb-search-page__results .kb-search__link").first
        link.wait_for()
        link.click()
        page.wait_for_load_state("load")
        assert page.evaluate("document.referrer") == ""
    finally:
        page.remove_listener("request", record)
    assert sent, "the walk made requests"
    assert not [r for r in sent if "SECRETTOKEN" in r or "qqzzxvk" in r], [r for r in sent if "SECRETTOKEN" in r][:3]
    assert not errors


def test_code_spans_in_result_titles_show_as_code_not_backticks(site) -> None:
    server, page, errors = site
    page.goto(server.url + "/search/?q=" + "DeepSpeed Zero-3 low_cpu_mem_usage device_map".replace(" ", "+"))
    item = page.locator(".kb-search__link[data-id=deepspeed-zero3-device-map-incompatible]").first
    item.wait_for()
    title = item.locator(".kb-search__title")
    assert "`" not in title.inner_text()
    assert title.locator("code", has_text="device_map").count() == 1
    assert not errors
