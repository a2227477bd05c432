"""The log doctor in a real browser: privacy, parity with the CLI, states, keyboard, accessibility.

The site is built once, served on 127.0.0.1 with its Content-Security-Policy header, and
driven with Playwright in Debian's Chromium. Requests to any other origin are aborted and
recorded: a test fails if a page or its worker even tries one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from browser import launch, require_chromium
from conftest import ROOT, run_kb
from site_server import SiteServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIXTURES = ROOT / "tests" / "fixtures" / "logs" / "cases"
BOOT_WAIT_MS = 90_000  # Pyodide's cold start is about 4 s here; CI machines can be slower


@pytest.fixture(scope="module")
def server(built_site: Path):
    require_chromium()
    with SiteServer(built_site) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser():
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


class Watch:
    """Records every request of a page and its workers; aborts those to other origins."""

    def __init__(self, context, origin: str):
        self.origin = origin
        self.requests: list[tuple[str, bytes | None]] = []
        self.foreign: list[str] = []
        self.csp_errors: list[str] = []
        context.on("request", lambda r: self.requests.append((r.url, r.post_data_buffer)))
        context.route("**/*", self._route)

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(self.origin) or url.startswith("data:") or url.startswith("blob:"):
            route.continue_()
        else:
            self.foreign.append(url)
            route.abort()

    def listen(self, page) -> None:
        page.on("console", lambda m: self.csp_errors.append(m.text) if "Content Security Policy" in m.text else None)

    def carried(self, secret: str) -> list[str]:
        return [url for url, body in self.requests if secret in url or (body and secret.encode() in body)]


@pytest.fixture
def context(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    watch = Watch(ctx, server.url)
    yield ctx, watch
    ctx.close()


def _diagnose(page, text: str, compact: bool = False) -> dict:
    root = page.locator(".kb-doctor").first
    root.locator("textarea").fill(text)
    root.locator("button", has_text="Diagnose").click()
    page.wait_for_selector(".kb-doctor[data-state=done], .kb-doctor[data-state=error]", timeout=BOOT_WAIT_MS)
    assert root.get_attribute("data-state") == "done", root.locator(".kb-doctor__status").inner_text()
    return json.loads(root.locator("script.kb-doctor__json").text_content())


def _strip_urls(report: dict) -> dict:
    """The report without what differs by place alone: the site's links, the input's name (a path or 'pasted log')."""
    return {**report, "findings": [{k: v for k, v in f.items() if k != "url"} for f in report["findings"]],
            "resembles": [{k: v for k, v in r.items() if k != "url"} for r in report["resembles"]],
            "sources": [{k: v for k, v in s.items() if k != "name"} for s in report["sources"]]}


def _cli_report(log: Path, built_site: Path) -> dict:
    """What `kb diagnose --format json` reports for ``log`` with the rules the built site's doctor loads."""
    rules = next((built_site / "assets" / "doctor").glob("rules.*.json"))
    cli = run_kb("diagnose", str(log), "--format", "json", "--rules", str(rules), cwd=ROOT)
    assert cli.code == 0, cli.err
    return json.loads(cli.out)


def test_pasted_log_never_leaves_the_page(context, server) -> None:
    ctx, watch = context
    page = ctx.new_page()
    watch.listen(page)
    page.goto(server.url + "/diagnose/")
    secret = "SECRET-TOKEN-7f3a9c1e-do-not-send"
    report = _diagnose(page, f"[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered {secret}\n")
    assert report["findings"][0]["id"] == "cuda-illegal-memory-access"
    assert page.locator(".kb-doctor__first").inner_text() == "Failed first: rank 3 (line 1)"
    assert secret in report["findings"][0]["evidence"][0]["text"]
    assert watch.carried(secret) == []
    assert watch.foreign == []
    assert any("/assets/pyodide/pyodide.asm.wasm" in url for url, _ in watch.requests), "Pyodide came from this site"
    assert watch.csp_errors == []


def test_entry_page_loads_no_python_until_the_box_is_used(context, server) -> None:
    ctx, watch = context
    page = ctx.new_page()
    watch.listen(page)
    page.goto(server.url + "/entries/xid-79/")
    page.wait_for_load_state("networkidle")
    assert not [url for url, _ in watch.requests if "/assets/pyodide/" in url or "/assets/doctor/" in url]
    secret = "ENTRY-SECRET-0b5d"
    report = _diagnose(page, f"[ 12.5] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus. {secret}\n")
    assert report["findings"][0]["id"] == "xid-79"
    assert any("/assets/pyodide/" in url for url, _ in watch.requests)
    assert watch.carried(secret) == [] and watch.foreign == [] and watch.csp_errors == []


def test_every_fixture_log_gives_the_same_findings_as_the_cli(context, server, built_site: Path) -> None:
    ctx, watch = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    logs = sorted(FIXTURES.glob("*.log"))
    assert len(logs) >= 40
    for log in logs:
        browser_report = _diagnose(page, log.read_text(encoding="utf-8"))
        assert _strip_urls(browser_report) == _strip_urls(_cli_report(log, built_site)), log.name
    assert watch.foreign == []


def test_large_file_is_streamed_with_progress_and_can_be_cancelled(context, server, tmp_path: Path) -> None:
    ctx, _ = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    noise = ("step 1 | loss 0.5 | NCCL INFO Channel 00/32 : 0 -> 1 via P2P/IPC/read\n" * 40_000).encode()
    big = tmp_path / "big.log"
    big.write_bytes(noise * 6 + b"[ 99.1] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n")
    root = page.locator(".kb-doctor")
    page.set_input_files(".kb-doctor input[type=file]", str(big))
    page.wait_for_selector(".kb-doctor[data-state=done], .kb-doctor[data-state=error]", timeout=BOOT_WAIT_MS)
    report = json.loads(root.locator("script.kb-doctor__json").text_content())
    assert report["input"]["bytes"] == big.stat().st_size
    assert report["findings"][0]["id"] == "xid-79" and report["findings"][0]["first_line"] == 240_001
    # cancel: start again and cancel while it streams
    page.set_input_files(".kb-doctor input[type=file]", [])
    page.set_input_files(".kb-doctor input[type=file]", str(big))
    page.wait_for_selector(".kb-doctor[data-state=analysing]")
    root.locator("button", has_text="Cancel").click()
    page.wait_for_selector(".kb-doctor[data-state=cancelled]", timeout=30_000)
    assert root.locator(".kb-doctor__status").inner_text() == "Cancelled."


def test_keyboard_alone(context, server) -> None:
    ctx, _ = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    for _ in range(60):  # tab through the page until the log box has focus
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.tagName") == "TEXTAREA":
            break
    else:
        pytest.fail("the log box cannot be reached with Tab")
    page.keyboard.insert_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB.\n")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Diagnose"
    page.keyboard.press("Enter")
    page.wait_for_selector(".kb-doctor[data-state=done]", timeout=BOOT_WAIT_MS)
    assert "CUDA out of memory" in page.locator(".kb-doctor__report").inner_text()


def test_blocked_webassembly_shows_an_error_with_retry(browser, server) -> None:
    ctx = browser.new_context()
    try:
        ctx.route("**/pyodide.asm.wasm", lambda route: route.abort())
        page = ctx.new_page()
        page.goto(server.url + "/diagnose/?doctor_timeout=20000")
        root = page.locator(".kb-doctor")
        root.locator("textarea").fill("RuntimeError: CUDA error: an illegal memory access was encountered\n")
        root.locator("button", has_text="Diagnose").click()
        page.wait_for_selector(".kb-doctor[data-state=error]", timeout=60_000)
        assert re.search(r"Python (could not|did not) start", root.locator(".kb-doctor__status").inner_text())
        ctx.unroute("**/pyodide.asm.wasm")
        root.locator("button", has_text="Retry").click()
        page.wait_for_selector(".kb-doctor[data-state=done]", timeout=BOOT_WAIT_MS)
    finally:
        ctx.close()


def test_rules_that_do_not_match_the_hash_in_their_name_are_refused(browser, server) -> None:
    """The worker checks the rules file's bytes against the SHA-256 in its name (and Python then
    skips the document's own hash): an edited file is refused with one clear line."""
    ctx = browser.new_context()
    try:
        def tamper(route) -> None:  # noqa: ANN001
            response = route.fetch()
            route.fulfill(response=response, body=response.body().replace(b'"critical"', b'"low"', 1))

        ctx.route("**/assets/doctor/rules.*.json", tamper)
        page = ctx.new_page()
        page.goto(server.url + "/diagnose/")
        page.locator(".kb-doctor textarea").fill("[ 12.5] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n")
        page.locator(".kb-doctor button", has_text="Diagnose").click()
        page.wait_for_selector(".kb-doctor[data-state=error]", timeout=BOOT_WAIT_MS)
        status = page.locator(".kb-doctor__status").inner_text()
        assert "the site's rules: content does not match its hash" in status, status
    finally:
        ctx.close()


def test_a_standard_library_that_cannot_be_downloaded_is_named_at_once(browser, server) -> None:
    """The site's standard library with bytecode (stdlib.<hash>.zip, named in the manifest) is a
    file of its own: missing from a deployment, it is named at once, not waited for."""
    import time  # noqa: PLC0415

    ctx = browser.new_context()
    try:
        ctx.route("**/assets/doctor/stdlib.*.zip", lambda route: route.fulfill(status=404, body="missing"))
        page = ctx.new_page()
        page.goto(server.url + "/diagnose/")
        page.locator(".kb-doctor textarea").fill("[ 12.5] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n")
        start = time.monotonic()
        page.locator(".kb-doctor button", has_text="Diagnose").click()
        page.wait_for_selector(".kb-doctor[data-state=error]", timeout=BOOT_WAIT_MS)
        status = page.locator(".kb-doctor__status").inner_text()
        assert "could not load the Python runtime" in status and "/assets/doctor/stdlib." in status, status
        assert time.monotonic() - start < 20
    finally:
        ctx.close()


def test_no_serious_accessibility_violations_beyond_the_theme(browser, server) -> None:
    from axe_playwright_python.sync_playwright import Axe

    # axe injects its script with eval, which the site's CSP rightly forbids: this context alone bypasses it
    ctx = browser.new_context(bypass_csp=True)
    try:
        page = ctx.new_page()
        page.goto(server.url + "/contributing/")
        baseline = {v["id"] for v in Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")}
        page.goto(server.url + "/diagnose/")
        page.locator(".kb-doctor textarea").fill("RuntimeError: CUDA error: an illegal memory access was encountered\n")
        page.locator(".kb-doctor button", has_text="Diagnose").click()
        page.wait_for_selector(".kb-doctor[data-state=done]", timeout=BOOT_WAIT_MS)
        # the report scrolls into view and the header's title fades in: judge colours once it has settled
        page.wait_for_function("""() => [...document.querySelectorAll('.md-header__topic')]
            .every((t) => ['0', '1'].includes(getComputedStyle(t).opacity))""", timeout=10_000)
        page.wait_for_timeout(300)
        found = {v["id"]: v for v in Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")}
        extra = {k: [n["target"] for n in v["nodes"]][:5] for k, v in found.items() if k not in baseline}
        assert not extra, extra
    finally:
        ctx.close()


def test_a_python_failure_in_the_worker_is_one_clear_line(context, server) -> None:
    """The worker never passes a Python traceback to the page: a call out of order (a piece of
    a log before any diagnosis started) fails inside Python, and the page gets one line."""
    ctx, watch = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    message = page.evaluate("""async () => {
        const worker = new Worker(new URL("assets/doctor/worker.mjs", document.baseURI.replace(/diagnose\\/.*$/, "")),
                                  { type: "module" });
        // start-up progress messages come first; the test waits for the replies after them
        const next = () => new Promise((resolve) => { worker.onmessage = (e) => { if (e.data.type !== "progress") resolve(e.data); }; });
        worker.postMessage({ type: "boot", site: location.origin + "/" });
        const ready = await next();
        if (ready.type !== "ready") return "boot failed: " + JSON.stringify(ready);
        worker.postMessage({ type: "chunk", data: new TextEncoder().encode("NVRM: Xid\\n").buffer });
        const reply = await next();
        worker.terminate();
        return reply.type + "|" + reply.message;
    }""")
    kind, _, text = message.partition("|")
    assert kind == "error", message
    assert "Traceback" not in text and "\n" not in text and 0 < len(text) <= 320, text
    assert text.startswith("The analysis stopped: ") and "Error" in text


def test_each_sample_says_what_the_doctor_will_answer(context, server) -> None:
    """A sample's button is titled by the diagnosis it gets, never by a label the report contradicts."""
    ctx, _ = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    page.wait_for_selector(".kb-doctor__sample")
    titles = [b.inner_text() for b in page.locator(".kb-doctor__sample").all()]
    assert len(titles) >= 3 and "Xid 79" in titles
    for i, title in enumerate(titles):
        page.evaluate("document.querySelector('.kb-doctor').dataset.state = 'idle'")  # the previous report is done
        page.locator(".kb-doctor__sample").nth(i).click()
        page.wait_for_selector(".kb-doctor[data-state=done]", timeout=BOOT_WAIT_MS)
        root = page.locator(".kb-doctor__finding--root h3").first.inner_text()
        # a wrapper sample (torchrun's ChildFailedError alone) is headed as a failure whose cause was not recognised
        badge = "Failure, cause not recognised" if root.startswith("Failure, cause") else "Root cause"
        assert root.split(badge, 1)[1].strip().startswith(title), (title, root)


def test_the_report_is_brought_into_view_with_focus_and_copyable_commands(context, server) -> None:
    ctx, _ = context
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    page = ctx.new_page()
    page.set_viewport_size({"width": 1280, "height": 700})
    page.goto(server.url + "/diagnose/")
    statuses: list[str] = []
    page.expose_function("kbStatus", lambda text: statuses.append(text))
    page.evaluate("""() => new MutationObserver(() => window.kbStatus(document.querySelector('.kb-doctor__status').textContent))
        .observe(document.querySelector('.kb-doctor__status'), { childList: true, characterData: true, subtree: true })""")
    page.locator(".kb-doctor textarea").fill("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    page.locator(".kb-doctor textarea").press("Control+Enter")
    page.wait_for_selector(".kb-doctor[data-state=done]", timeout=BOOT_WAIT_MS)
    # progress while Python loads: the steps, not a bare "loading"
    assert any(re.search(r"step [123] of 3", s) for s in statuses), statuses
    # focus moved to the verdict, which is on screen
    assert page.evaluate("document.activeElement.classList.contains('kb-doctor__verdict')")
    box = page.locator(".kb-doctor__verdict").bounding_box()
    header = page.locator(".md-header").bounding_box()
    assert box and header["y"] + header["height"] <= box["y"] < 700, (box, header)  # not under the sticky header
    # first steps: Markdown rendered (no literal backticks), each command with a working copy button
    steps = page.locator(".kb-doctor__steps")
    assert "`" not in steps.inner_text()
    assert steps.locator("code").count() >= 1
    commands = steps.locator(".kb-doctor__command")
    assert commands.count() >= 1
    first = commands.first
    first.locator("button").click()
    expect = first.locator("code").inner_text()
    assert page.evaluate("navigator.clipboard.readText()") == expect
    assert first.locator("button").inner_text() == "Copied"


def test_many_files_and_an_archive_give_one_report_like_the_cli(context, server, tmp_path: Path) -> None:
    """Dropped or chosen files of a whole job: one report naming the file and node that failed first."""
    import tarfile  # noqa: PLC0415

    ctx, watch = context
    node1, node2 = tmp_path / "node-1", tmp_path / "node-2"
    node1.mkdir()
    node2.mkdir()
    (node1 / "kern.log").write_text("Nov  5 01:15:00 node-1 kernel: [ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, "
                                    "name=python, GPU has fallen off the bus.\n")
    (node2 / "train.log").write_text("[rank3]:[E1105 01:26:08.071329 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught "
                                     "collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, "
                                     "NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n")
    archive = tmp_path / "job.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        t.add(node1, arcname="node-1")
        t.add(node2, arcname="node-2")
    cli = json.loads(run_kb("diagnose", str(archive), "--format", "json").out)
    page = ctx.new_page()
    watch.listen(page)
    page.goto(server.url + "/diagnose/")
    job = tmp_path / "job"
    job.mkdir()
    node1.rename(job / "node-1")
    node2.rename(job / "node-2")
    node1, node2 = job / "node-1", job / "node-2"
    for files in ([str(archive)], [str(node1 / "kern.log"), str(node2 / "train.log")], str(job)):
        page.evaluate("document.querySelector('.kb-doctor').dataset.state = 'idle'")
        if isinstance(files, str):  # a whole folder, through the folder picker
            page.set_input_files(".kb-doctor input[webkitdirectory]", files)
        else:
            page.set_input_files(".kb-doctor input[type=file][multiple]", files)
        page.wait_for_selector(".kb-doctor[data-state=done]", timeout=BOOT_WAIT_MS)
        report = json.loads(page.locator(".kb-doctor__json").text_content())
        assert [f["id"] for f in report["findings"]] == [f["id"] for f in cli["findings"]] == ["xid-79", "nccl-watchdog-timeout"]
        assert report["initiating"]["host"] == "node-1" and len(report["sources"]) == 2
        shown = page.locator(".kb-doctor__report").inner_text()
        assert "Failed first: host node-1" in shown
        if isinstance(files, str) or files[0].endswith(".tar.gz"):  # paths name both nodes; chosen files carry names only
            assert [n["host"] for n in report["nodes"]] == ["node-1", "node-2"] and "What each node saw first" in shown
    assert not watch.foreign and not watch.carried("GPU has fallen off the bus")


def test_copy_redacted_gives_a_report_without_hosts_or_users(context, server) -> None:
    ctx, _ = context
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    page.locator(".kb-doctor textarea").fill(
        "Nov  5 01:15:00 dgx-a100-042 kernel: [ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen "
        "off the bus.\n/home/jdoe/run.sh failed on 10.20.30.40\n")
    page.locator(".kb-doctor button", has_text="Diagnose").click()
    page.wait_for_selector(".kb-doctor[data-state=done]", timeout=BOOT_WAIT_MS)
    page.locator(".kb-doctor button", has_text="Copy redacted").click()
    page.wait_for_function("() => document.querySelector('.kb-doctor__status').textContent.includes('replaced')")
    shared = page.evaluate("navigator.clipboard.readText()")
    assert "Xid 79" in shared and "host-1" in shared
    assert "dgx-a100-042" not in shared and "jdoe" not in shared and "10.20.30.40" not in shared
    page.locator(".kb-doctor button", has_text="Copy as Markdown").click()
    assert "dgx-a100-042" in page.evaluate("navigator.clipboard.readText()")


def test_dropped_files_give_one_report(context, server) -> None:
    """Files dropped on the box (the browser's drop event with a DataTransfer of two files)."""
    ctx, _ = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    page.wait_for_selector(".kb-doctor textarea")
    page.evaluate("""() => {
        const dt = new DataTransfer();
        dt.items.add(new File(["Nov  5 01:15:00 node-1 kernel: [ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\\n"], "node-1-kern.log"));
        dt.items.add(new File(["[rank3]:[E1105 01:26:08.071329 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\\n"], "node-2-train.log"));
        const box = document.querySelector(".kb-doctor");
        box.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
        box.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    }""")
    page.wait_for_selector(".kb-doctor[data-state=done]", timeout=BOOT_WAIT_MS)
    report = json.loads(page.locator(".kb-doctor__json").text_content())
    assert [s["name"] for s in report["sources"]] == ["node-1-kern.log", "node-2-train.log"]
    assert report["findings"][0]["id"] == "xid-79" and report["initiating"]["host"] == "node-1"


def test_code_spans_in_a_finding_title_show_as_code_not_backticks(context, server) -> None:
    ctx, _ = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    report = _diagnose(page, "ValueError: DeepSpeed Zero-3 is not compatible with `low_cpu_mem_usage=True` "
                             "or with passing a `device_map`.\n")
    assert report["findings"][0]["id"] == "deepspeed-zero3-device-map-incompatible"
    assert "`" in report["findings"][0]["title"]  # the corpus writes the option names as code
    heading = page.locator(".kb-doctor__finding h3").first
    assert "`" not in heading.inner_text()
    assert heading.locator("code", has_text="low_cpu_mem_usage=True").count() == 1


def test_a_reworded_failure_gets_a_closest_wording_lead_like_the_cli(context, server, built_site: Path, tmp_path: Path) -> None:
    """No signature matches the line; the doctor offers the entry whose real example it resembles,
    as a lead apart from the findings, the same as `kb diagnose` with the same rules."""
    ctx, watch = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    text = "epoch 3 step 100 loss 0.3\nERROR ProcessGroup aborted: the remote process exited, or a network error happened (NCCL)\n"
    report = _diagnose(page, text)
    assert report["findings"] == [] and [r["id"] for r in report["resembles"]][:1] == ["nccl-remote-error"]
    log = tmp_path / "reworded.log"
    log.write_text(text, encoding="utf-8")
    assert _strip_urls(report) == _strip_urls(_cli_report(log, built_site))
    card = page.locator(".kb-doctor__finding--resembles").first
    assert "resembles" in card.locator(".kb-role").inner_text().lower()
    assert card.locator("a").get_attribute("href").endswith("entries/nccl-remote-error/")
    assert "the remote process exited" in card.locator("pre").inner_text()
    assert "No known failure found" in page.locator(".kb-doctor__verdict").inner_text()
    # a wrapper alone ('Segmentation fault') is shown as a failure whose cause was not recognised
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    report = _diagnose(page, "step 3: ok\nSegmentation fault (core dumped)\n")
    assert [(f["id"], f["role"], f["wrapper"]) for f in report["findings"]] == [("host-process-segfault", "root", True)]
    badge = page.locator(".kb-doctor__finding--root .kb-role").first
    assert badge.inner_text() == "Failure, cause not recognised"
    assert watch.foreign == []


def test_a_failure_line_wrapped_in_two_is_found_whole_like_the_cli(context, server, built_site: Path, tmp_path: Path) -> None:
    """A message a web page broke mid-word is read with the next line joined: the same finding
    and line as `kb diagnose`, and the card says the line was wrapped."""
    ctx, watch = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    text = "[rank0]:     loss.backward()\n[rank0]: RuntimeError: CUDA error: an illegal memory acc\ness was encountered\n"
    report = _diagnose(page, text)
    assert [(f["id"], f["first_line"], f["fields"].get("joined")) for f in report["findings"]] == [
        ("cuda-illegal-memory-access", 2, 3)]
    log = tmp_path / "wrapped.log"
    log.write_text(text, encoding="utf-8")
    assert _strip_urls(report) == _strip_urls(_cli_report(log, built_site))
    card = page.locator(".kb-doctor__finding--root").first
    assert "a line wrapped in two, read with line 3 joined to it" in card.locator(".kb-doctor__meta").first.inner_text()
    assert "an illegal memory access was encountered" in card.locator("pre.kb-doctor__evidence").inner_text()
    assert watch.foreign == []


# ---- red team s25 (bench/walks/redteam-browser-s25.md): the browser attacked -----------------------
def _state(page) -> str:
    return page.evaluate("document.querySelector('.kb-doctor').dataset.state")


def _wait_state(page, states: tuple[str, ...], seconds: float) -> tuple[str, float, float]:
    """Polls the box (the CSP forbids wait_for_function's eval) until it is in one of ``states``;
    returns the state, the seconds it took and the longest the page took to answer one poll."""
    import time  # noqa: PLC0415

    start = time.monotonic()
    slowest = 0.0
    while time.monotonic() - start < seconds:
        asked = time.monotonic()
        state = _state(page)
        slowest = max(slowest, time.monotonic() - asked)
        if state in states:
            return state, time.monotonic() - start, slowest
        page.wait_for_timeout(100)
    return f"still {_state(page)}", time.monotonic() - start, slowest


XID_LINE = "[ 99.1] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"


def test_a_runtime_that_cannot_be_downloaded_is_said_at_once_and_retry_reads_every_file(browser, server, tmp_path: Path) -> None:
    """Pyodide never settles when pyodide.asm.wasm cannot be downloaded: the box waited its whole
    start-up timeout (60 s) and then blamed WebAssembly. Retry after a failed run of several
    chosen files read none of them ("input.read is not a function")."""
    a, b = tmp_path / "node-1.log", tmp_path / "node-2.log"
    a.write_text(XID_LINE)
    b.write_text("step 1 ok\n")
    ctx = browser.new_context()
    try:
        ctx.route("**/pyodide.asm.wasm", lambda route: route.abort())
        page = ctx.new_page()
        page.goto(server.url + "/diagnose/")  # the default start-up timeout
        page.set_input_files(".kb-doctor input[type=file][multiple]", [str(a), str(b)])
        state, seconds, _ = _wait_state(page, ("error", "done"), 30)
        assert state == "error" and seconds < 30, (state, seconds)
        status = page.locator(".kb-doctor__status").inner_text()
        assert "could not load the Python runtime" in status and "Failed to fetch" in status, status
        ctx.unroute("**/pyodide.asm.wasm")
        page.locator(".kb-doctor button", has_text="Retry").click()
        assert _wait_state(page, ("error", "done"), BOOT_WAIT_MS / 1000)[0] == "done", page.locator(".kb-doctor__status").inner_text()
        report = json.loads(page.locator(".kb-doctor__json").text_content())
        assert [s["name"] for s in report["sources"]] == ["node-1.log", "node-2.log"]
        assert report["findings"][0]["id"] == "xid-79"
    finally:
        ctx.close()


def test_cancel_stops_a_worker_busy_with_one_piece_and_works_during_start_up(context, server, tmp_path: Path) -> None:
    """A 16 KB file (gzip inside gzip) unpacks to 1 GiB inside one piece: the worker answers that
    piece after some 20 s, and Cancel did nothing until then. While Python started, Cancel was
    hidden and the box could not be stopped. Now Cancel answers within about a second, and the
    next use starts a fresh worker."""
    import gzip  # noqa: PLC0415

    line = b"step 1 | loss 0.5 | NCCL INFO Channel 00/32 : 0 -> 1 via P2P/IPC/read\n"
    member = gzip.compress(line * ((16 << 20) // len(line)), 6)
    bomb = tmp_path / "bomb.gz.gz"
    bomb.write_bytes(gzip.compress(member * 64 + gzip.compress(XID_LINE.encode()), 6))
    ctx, watch = context
    page = ctx.new_page()
    page.goto(server.url + "/entries/xid-79/")  # nothing loaded until the box is used
    root = page.locator(".kb-doctor")
    root.locator("textarea").fill(XID_LINE)
    root.locator("button", has_text="Diagnose").click()
    root.locator("button", has_text="Cancel").click(timeout=2_000)  # while Python starts
    assert _wait_state(page, ("cancelled", "done", "error"), 5)[0] == "cancelled"
    assert _diagnose(page, XID_LINE, compact=True)["findings"][0]["id"] == "xid-79"
    page.goto(server.url + "/diagnose/")
    page.set_input_files(".kb-doctor input[type=file][multiple]", str(bomb))
    assert _wait_state(page, ("analysing",), BOOT_WAIT_MS / 1000)[0] == "analysing"
    page.wait_for_timeout(1_500)  # the worker is inside the piece that unpacks to 1 GiB
    assert _state(page) == "analysing"
    page.locator(".kb-doctor button", has_text="Cancel").click()
    state, seconds, _ = _wait_state(page, ("cancelled", "done", "error"), 10)
    assert state == "cancelled" and seconds < 5, (state, seconds)
    assert page.locator(".kb-doctor__status").inner_text() == "Cancelled."
    report = _diagnose(page, XID_LINE)  # a fresh worker
    assert report["findings"][0]["id"] == "xid-79"
    assert watch.foreign == []


def test_a_chosen_file_changed_before_it_is_read_is_skipped_with_a_note(context, server, tmp_path: Path) -> None:
    """One of several chosen files changed (or removed) after it was chosen: Chromium refuses to
    read it, and the whole report was lost to a message about permissions, with a Retry that
    failed again. As `kb diagnose DIR` does with an unreadable file: the others are read, a note
    names it. A single such file is one clear message."""
    ctx, _ = context
    big = tmp_path / "a-big.log"
    big.write_bytes(b"step 1 | loss 0.5 | NCCL INFO Channel 00/32 : 0 -> 1 via P2P/IPC/read\n" * 400_000)  # 28 MB
    xid, changed = tmp_path / "b-kern.log", tmp_path / "c-changed.log"
    xid.write_text(XID_LINE)
    changed.write_text("step 2 ok\n")
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    page.set_input_files(".kb-doctor input[type=file][multiple]", [str(big), str(xid), str(changed)])
    changed.write_text("step 2 ok, and more written since\n")
    assert _wait_state(page, ("done", "error"), BOOT_WAIT_MS / 1000)[0] == "done", page.locator(".kb-doctor__status").inner_text()
    report = json.loads(page.locator(".kb-doctor__json").text_content())
    assert report["findings"][0]["id"] == "xid-79"
    assert any(n.startswith("c-changed.log could not be read: it changed or was removed after it was chosen; skipped")
               for n in report["notes"]), report["notes"]
    assert "c-changed.log could not be read" in page.locator(".kb-doctor__report").inner_text()
    page.set_input_files(".kb-doctor input[type=file][multiple]", [])
    page.set_input_files(".kb-doctor input[type=file][multiple]", str(big))
    big.write_bytes(b"rewritten\n")
    assert _wait_state(page, ("done", "error"), BOOT_WAIT_MS / 1000)[0] == "error"
    assert page.locator(".kb-doctor__status").inner_text() == (
        "a-big.log could not be read: it changed or was removed after it was chosen. Choose it again.")


def test_a_large_paste_is_read_like_a_file_and_the_page_stays_responsive(context, server) -> None:
    """20 MB pasted into the box sat in it: the tab grew from 0.5 to 2.2 GB, and the analysis took
    10 s instead of under 1 s, the page stalling up to a second at each status update (Chromium
    lays the text box out again; 50 MB took 22 s to lay out, 3.7 GB). A paste over 1 Mi
    characters is now read at once as a chosen file is, encoded a piece at a time, never shown."""
    ctx, watch = context
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    page.evaluate("""(xid) => {
        const line = 'step 1 | loss 0.5 | NCCL INFO Channel 00/32 : 0 -> 1 via P2P/IPC/read PASTED-7c1d\\n';
        return navigator.clipboard.writeText(line.repeat(Math.floor(20 * 1048576 / line.length)) + xid); }""", XID_LINE)
    page.locator(".kb-doctor textarea").focus()
    page.keyboard.press("Control+V")
    state, _, slowest = _wait_state(page, ("done", "error"), BOOT_WAIT_MS / 1000)
    assert state == "done", page.locator(".kb-doctor__status").inner_text()
    assert slowest < 2, f"the page did not answer for {slowest:.1f} s"
    report = json.loads(page.locator(".kb-doctor__json").text_content())
    assert report["findings"][0]["id"] == "xid-79" and report["input"]["bytes"] > 20_000_000
    assert page.evaluate("document.querySelector('.kb-doctor textarea').value.length") == 0
    # the empty box says where the paste went
    assert re.match(r"Pasted log of [0-9,.\u202f\u00a0 ]+ characters: read directly, not shown here",
                    page.get_attribute(".kb-doctor textarea", "placeholder"))
    assert watch.carried("PASTED-7c1d") == [] and watch.foreign == []


# ---- red team redweb29 (helper-notes/redweb29.md): inputs during a run, what the page says -----------
BIG_PASTE = 1_200_000  # characters: over the doctor's 1 Mi limit, so read directly, never put in the box


def _notice(page) -> str | None:
    """The line under the box (what a large paste became, or why a request waits), when shown."""
    notice = page.locator(".kb-doctor__notice")
    return notice.inner_text() if notice.is_visible() else None


def _box(page) -> str:
    return page.evaluate("document.querySelector('.kb-doctor textarea').value")


def test_while_a_run_is_on_nothing_changes_what_it_reads_and_each_request_is_answered(browser, server, tmp_path: Path) -> None:
    """F2, F3, F7: during a run a paste of 2 MB went into the box (the guard that reads a large
    paste as a file was off while busy; 30 MB froze the tab for 43 s), a sample replaced the box's
    text while the report that followed was the old log's, and a dropped or chosen file, or
    Ctrl+Enter, was ignored without a word. Now the box is read-only during a run, and each of
    these is refused with a visible reason; the report is the box's log."""
    held: list = []
    dropped = tmp_path / "dropped.log"
    dropped.write_text("step 1 ok\n")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        ctx.grant_permissions(["clipboard-read", "clipboard-write"])
        ctx.route("**/pyodide.asm.wasm", lambda route: held.append(route))  # the run waits on Python until released
        page = ctx.new_page()
        page.goto(server.url + "/diagnose/")
        box = page.locator(".kb-doctor textarea")
        box.fill(XID_LINE)
        page.locator(".kb-doctor button", has_text="Diagnose").click()
        for _ in range(600):
            if held:
                break
            page.wait_for_timeout(100)
        assert held and _state(page) == "loading"
        # a large paste: not in the box, said
        page.evaluate("(n) => navigator.clipboard.writeText('[ 1.0] NVRM: Xid (PCI:0000:3b:00): 48, DBE\\n'.repeat(n))", BIG_PASTE // 40)
        box.focus()
        page.keyboard.press("End")
        page.keyboard.press("Control+V")
        assert _box(page) == XID_LINE
        assert _notice(page).startswith("Your paste was not read: a diagnosis of the text in the box is still running. "
                                        "Wait for it to end, or Cancel it, then paste again.")
        page.keyboard.type("torch.OutOfMemoryError: CUDA out of memory.")
        assert _box(page) == XID_LINE and _notice(page).startswith("The box cannot be edited now")
        page.keyboard.press("Control+Enter")
        assert _notice(page).startswith("Not started: a diagnosis of the text in the box is still running")
        sample = page.locator(".kb-doctor__sample", has_text="CUDA out of memory")
        assert sample.get_attribute("aria-disabled") == "true"
        sample.click(force=True)  # marked unavailable, still answers a click
        page.wait_for_timeout(300)
        assert _box(page) == XID_LINE
        assert _notice(page).startswith("The sample “CUDA out of memory” was not loaded: a diagnosis of the text in the box")
        page.evaluate("""() => {
            const dt = new DataTransfer();
            dt.items.add(new File(["step 1 ok\\n"], "dropped.log"));
            document.querySelector(".kb-doctor").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
        }""")
        assert _notice(page).startswith("dropped.log was not read: a diagnosis of the text in the box is still running. "
                                        "Wait for it to end, or Cancel it, then drop it again.")
        page.set_input_files(".kb-doctor input[type=file][multiple]", str(dropped))
        assert _notice(page).startswith("dropped.log was not read: a diagnosis of the text in the box is still running. "
                                        "Wait for it to end, or Cancel it, then choose it again.")
        assert page.evaluate("document.querySelector('.kb-doctor input[type=file][multiple]').value") == ""  # no stale name
        assert _state(page) == "loading"
        for route in held:
            route.continue_()
        assert _wait_state(page, ("done", "error"), BOOT_WAIT_MS / 1000)[0] == "done", page.locator(".kb-doctor__status").inner_text()
        report = json.loads(page.locator(".kb-doctor__json").text_content())
        assert [f["id"] for f in report["findings"]] == ["xid-79"] and report["input"]["lines"] == 1
        assert _box(page) == XID_LINE  # the report is the box's log
        assert _notice(page) == ("dropped.log was not read: a diagnosis of the text in the box was running. "
                                 "It has ended: choose it again now.")
        # once the run is over the box and the samples work again
        assert box.get_attribute("readonly") is None and sample.get_attribute("aria-disabled") is None
        box.fill("step 2 ok\n")
        assert _notice(page) is None
    finally:
        ctx.close()


def test_a_large_paste_into_a_box_holding_text_empties_it_and_says_what_was_read(context, server) -> None:
    """F4: the box held an out-of-memory line; 1.2 M characters of an Xid 48 log pasted after it
    were diagnosed (Xid 48) while the box went on showing the old line, and the explanation went
    to the placeholder, invisible behind that text. Diagnose then read the old line."""
    ctx, watch = context
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    box = page.locator(".kb-doctor textarea")
    box.fill("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB.\n")
    text = "step 1 ok PASTED-48a2\n" * (BIG_PASTE // 22) + "[ 99.1] NVRM: Xid (PCI:0000:3b:00): 48, An uncorrectable double bit error.\n"
    page.evaluate("(t) => navigator.clipboard.writeText(t)", text)
    box.focus()
    page.keyboard.press("End")
    page.keyboard.press("Control+V")
    assert _box(page) == ""
    shown = _notice(page)
    assert shown and re.match(r"Pasted log of 1[,.\u202f\u00a0 ]?200[,.\u202f\u00a0 ]?\d{3} characters: read directly, "
                              r"not put in the box", shown), shown
    assert _wait_state(page, ("done", "error"), BOOT_WAIT_MS / 1000)[0] == "done"
    report = json.loads(page.locator(".kb-doctor__json").text_content())
    assert [f["id"] for f in report["findings"]] == ["xid-48"]
    assert page.locator(".kb-doctor__verdict").inner_text().endswith(" lines of the pasted log")
    # the box is used again: it is what Diagnose reads, and the notice about the paste goes
    box.fill(XID_LINE)
    assert _notice(page) is None
    assert _diagnose(page, XID_LINE)["findings"][0]["id"] == "xid-79"
    assert watch.carried("PASTED-48a2") == [] and watch.foreign == []


def test_the_page_says_what_the_report_says_of_cut_lines_and_of_empty_or_binary_inputs(context, server, tmp_path: Path) -> None:
    """F9: a line over 64 KiB is read in part; the Markdown report said so, the page did not.
    F10: a program or an empty file got a bare "No known failure found in 0 lines.". F14: "in 1
    lines"; the "Done" line ended under the sticky header when the report was scrolled to."""
    ctx, _ = context
    page = ctx.new_page()
    page.set_viewport_size({"width": 1280, "height": 700})
    page.goto(server.url + "/diagnose/")
    _diagnose(page, XID_LINE)
    assert page.locator(".kb-doctor__verdict").inner_text() == "1 failure found in 1 line"
    status = page.locator(".kb-doctor__status").bounding_box()
    header = page.locator(".md-header").bounding_box()
    assert status and header["y"] + header["height"] <= status["y"] < 700, (status, header)  # "Done: ..." is seen

    def choose(path: Path) -> str:
        page.set_input_files(".kb-doctor input[type=file][multiple]", [])
        page.set_input_files(".kb-doctor input[type=file][multiple]", str(path))
        assert _wait_state(page, ("done", "error"), BOOT_WAIT_MS / 1000)[0] == "done"
        return page.locator(".kb-doctor__report").inner_text()

    long_line = tmp_path / "long.log"
    long_line.write_bytes(b"x" * 300_000 + b"\n" + XID_LINE.encode())
    shown = choose(long_line)
    report = json.loads(page.locator(".kb-doctor__json").text_content())
    assert report["input"]["cut_lines"] == 1
    # the report's own note (report.py carries it in `notes`): said once, in the text report's words
    assert report["notes"] == ["1 stretch of over 64 KiB without a line break: only the first and last 64 KiB of each were read"]
    assert shown.count("64 KiB without a line break") == 1, shown
    assert f"Note: {report['notes'][0]}\n" in shown
    assert f"Note: {report['notes'][0]}" in run_kb("diagnose", str(long_line)).out
    assert page.locator(".kb-doctor__verdict").inner_text() == "1 failure found in 2 lines of long.log"
    program = tmp_path / "tool.bin"
    program.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 400 + b"\nGLIBC_2.34 not found\n")
    shown = choose(program)
    assert len(re.findall("looks binary", shown)) == 1, shown  # said once, by the page or by the matcher's note
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    choose(empty)
    assert page.locator(".kb-doctor__verdict").inner_text() == "Nothing to read: empty.log is empty (0 bytes)."
    assert page.locator(".kb-doctor__status").inner_text() == "Done: nothing to read."
    # a text log (UTF-16, or NUL padding a crash left in a syslog file) is not called binary
    padded = tmp_path / "kern.log"
    padded.write_bytes(b"kernel: eth0 up\n" * 2000 + b"\0" * 6000 + XID_LINE.encode())
    assert "looks binary" not in choose(padded)


def test_going_back_does_not_put_the_log_back_in_the_box(context, server) -> None:
    """F13: after a diagnosis, a click to an entry and Back, Chromium's form restore refilled the
    box with the pasted log; nothing else keeps it."""
    ctx, _ = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    _diagnose(page, f"{XID_LINE.strip()} BACK-SECRET-5e1\n")
    page.goto(server.url + "/entries/xid-79/")
    page.go_back()
    page.wait_for_selector(".kb-doctor textarea")
    page.wait_for_timeout(500)
    assert "BACK-SECRET-5e1" not in _box(page)
    assert page.get_attribute(".kb-doctor textarea", "autocomplete") == "off"


def test_evidence_shows_controls_and_bidi_overrides_written_out(context, server) -> None:
    """Red team s29 (F8): U+202E in a log line reversed what the evidence showed ('(fdp.exe' read
    as 'exe.pdf'); the text and Markdown reports already wrote such characters out."""
    ctx, _ = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    _diagnose(page, "[ 99.1] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus. \u202e(fdp.exe\n")
    evidence = page.locator(".kb-doctor__evidence").first.inner_text()
    assert "\\u202e(fdp.exe" in evidence and "\u202e" not in evidence, evidence


def test_a_dropped_folder_past_the_file_bound_says_how_many_were_not_read(context, server, tmp_path: Path) -> None:
    """Red team s29 (F5): a folder of 10,011 files was cut to 10,000 with no word of the other 11
    (and which ones is the browser's listing order: the failing node's log can be among them)."""
    folder = tmp_path / "job"
    folder.mkdir()
    for i in range(10_011):
        (folder / f"rank{i:05d}.log").write_text(f"step {i} ok\n", encoding="utf-8")
    ctx, _ = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    page.wait_for_selector(".kb-doctor textarea")
    box = page.locator(".kb-doctor").bounding_box()
    cdp = ctx.new_cdp_session(page)
    data = {"items": [], "files": [str(folder)], "dragOperationsMask": 1}
    for kind in ("dragEnter", "dragOver", "drop"):
        cdp.send("Input.dispatchDragEvent", {"type": kind, "x": box["x"] + box["width"] / 2, "y": box["y"] + 60, "data": data})
    assert _wait_state(page, ("done", "error"), 300)[0] == "done"
    report = json.loads(page.locator(".kb-doctor__json").text_content())
    assert report["input"]["files"] == 10_000
    shown = page.locator(".kb-doctor__report").inner_text()
    assert "only 10,000 of the 10,011 dropped files were read" in shown, shown[:500]


def test_a_box_used_offline_says_the_download_failed_and_offers_retry(browser, server) -> None:
    """Red team s29 (F11): an entry page loaded, the connection lost, then its box used: 'Python
    could not start: the worker failed to load', which names neither the download nor the
    connection."""
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.goto(server.url + "/entries/xid-79/")
        page.wait_for_load_state("networkidle")
        ctx.set_offline(True)
        root = page.locator(".kb-doctor").first
        root.locator("textarea").fill("[ 12.5] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n")
        root.locator("button", has_text="Diagnose").click()
        assert _wait_state(page, ("error", "done"), 60)[0] == "error"
        status = root.locator(".kb-doctor__status").inner_text()
        assert "could not be downloaded (this browser is offline)" in status and "check the connection" in status, status
        assert root.locator("button", has_text="Retry").count() == 1
        ctx.set_offline(False)
        root.locator("button", has_text="Retry").click()
        assert _wait_state(page, ("error", "done"), BOOT_WAIT_MS / 1000)[0] == "done"
    finally:
        ctx.close()


def _drop(page, name: str, data: bytes) -> None:
    """One file dropped on the first box (a DataTransfer holding it, as a drag from the desktop gives)."""
    import base64  # noqa: PLC0415

    page.evaluate("""([name, b64]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
        document.querySelector(".kb-doctor").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    }""", [name, base64.b64encode(data).decode()])


def test_a_gzip_cut_short_dropped_alone_is_named_as_the_cli_names_it(context, server, built_site: Path, tmp_path: Path) -> None:
    """A .gz cut before 262 bytes of its text came out lost that text and began no source: the
    page's report listed its one source as 'input' (standard input's name), where `kb diagnose`
    names the file. Cut in half, at its first line, and in its header, each is named logs.gz."""
    import gzip  # noqa: PLC0415
    import zlib  # noqa: PLC0415

    second = ("[rank3]:[E1105 01:26:08.071329 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
              "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
              "milliseconds before timing out.\n")
    whole = gzip.compress((XID_LINE + second).encode())
    early = next(whole[:n] for n in range(len(whole))
                 if len(XID_LINE) < len(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(whole[:n])) < 262)
    long = gzip.compress((XID_LINE * 3 + "".join(f"step {i} loss 0.{i % 97}\n" for i in range(20_000))).encode())
    ctx, watch = context
    page = ctx.new_page()
    page.goto(server.url + "/diagnose/")
    page.wait_for_selector(".kb-doctor textarea")
    cut_note = "logs.gz: the gzip data ends before its end mark (the file is cut short or still being written); what came before it was read"
    # (lines: of the early cut, the Xid line whole and the start of the next; of the header, none)
    for data, lines in ((long[: len(long) // 2], None), (early, 2), (early[:12], 0)):
        path = tmp_path / "logs.gz"
        path.write_bytes(data)
        page.evaluate("document.querySelector('.kb-doctor').dataset.state = 'idle'")
        _drop(page, "logs.gz", data)
        assert _wait_state(page, ("done", "error"), BOOT_WAIT_MS / 1000)[0] == "done", page.locator(".kb-doctor__status").inner_text()
        report = json.loads(page.locator(".kb-doctor__json").text_content())
        shown = page.locator(".kb-doctor__report").inner_text()
        assert [s["name"] for s in report["sources"]] == ["logs.gz"] and report["input"]["files"] == 1, report["sources"]
        assert report["notes"] == [cut_note] and f"Note: {cut_note}" in shown, shown
        assert page.locator(".kb-doctor__verdict").inner_text().endswith(" of logs.gz" if lines != 0 else " of logs.gz.")
        if lines == 0:  # nothing came out: the CLI stops with the same sentence, naming the file by its path
            cli = run_kb("diagnose", str(path))
            assert cli.code == 2 and cli.err.strip() == f"kb diagnose: {tmp_path}/{cut_note}", cli.err
            assert report["input"]["lines"] == 0 and report["findings"] == []
            continue
        cli = _cli_report(path, built_site)
        assert [n.replace(str(path), "logs.gz") for n in cli["notes"]] == report["notes"]
        assert [s["name"] for s in cli["sources"]] == [str(path)]
        assert _strip_urls({**report, "notes": []}) == _strip_urls({**cli, "notes": []})
        assert report["findings"][0]["id"] == "xid-79"
        if lines:
            assert report["input"]["lines"] == lines
    assert not watch.foreign


def _boxes(page) -> list[list[str]]:
    """Each box's state and status line, read in one go."""
    return page.evaluate("Array.from(document.querySelectorAll('.kb-doctor'), "
                         "(box) => [box.dataset.state, box.querySelector('.kb-doctor__status').textContent])")


WAITING = "Waiting for the other log box on this page to finish its diagnosis…"


def test_a_second_box_waits_for_the_one_running_and_says_so(context, server, tmp_path: Path) -> None:
    """Boxes on one page share one worker and its Python session, a box's turn after the other's.
    No built page has two boxes: the served /diagnose/ page gets a compact box after its own."""
    ctx, watch = context
    page = ctx.new_page()

    def two_boxes(route) -> None:  # noqa: ANN001
        response = route.fetch()
        body = response.text()
        first = re.search(r'<div class="kb-doctor" data-mode="full"[^>]*>.*?</div>', body, re.S)
        assert first, "the /diagnose/ page has its box"
        second = '<div class="kb-doctor" data-mode="compact" data-label="Second box" markdown="0"></div>'
        route.fulfill(response=response, body=body[:first.end()] + second + body[first.end():])

    page.route(server.url + "/diagnose/", two_boxes)
    page.goto(server.url + "/diagnose/")
    boxes = page.locator(".kb-doctor")
    assert boxes.count() == 2
    page.wait_for_selector(".kb-doctor[data-mounted] + .kb-doctor[data-mounted] textarea")
    # the first box reads a file large enough to be read for some seconds (67 MB: 3.6 s on 2 busy cores)
    noise = ("step 1 | loss 0.5 | NCCL INFO Channel 00/32 : 0 -> 1 via P2P/IPC/read\n" * 40_000).encode()
    big = tmp_path / "big.log"
    big.write_bytes(noise * 24 + b"[ 1.0] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, An uncorrectable double bit error\n")
    page.set_input_files(".kb-doctor input[type=file][multiple]", str(big))
    assert _wait_state(page, ("analysing", "done", "error"), BOOT_WAIT_MS / 1000)[0] == "analysing"
    second = boxes.nth(1)
    second.locator("textarea").fill(XID_LINE)
    second.locator("button", has_text="Diagnose").click()
    (first_state, _), (second_state, second_status) = _boxes(page)
    assert first_state == "analysing", "the first box was still reading when the second was used"
    assert (second_state, second_status) == ("loading", WAITING)
    assert second.locator(".kb-doctor__status").is_visible() and second.locator(".kb-doctor__status").inner_text() == WAITING
    # the first box's run goes on while the second waits, and ends with its own report
    assert _wait_state(page, ("done", "error"), 120)[0] == "done"
    first_report = json.loads(boxes.nth(0).locator(".kb-doctor__json").text_content())
    assert first_report["input"]["bytes"] == big.stat().st_size and first_report["findings"][0]["id"] == "xid-48"
    # then the second box has its turn: the message is gone, its report is its own log's
    for _ in range(600):
        if _boxes(page)[1][0] in ("done", "error"):
            break
        page.wait_for_timeout(100)
    (_, first_status), (second_state, second_status) = _boxes(page)
    assert second_state == "done" and second_status == "Done: Xid 79: GPU has fallen off the bus.", second_status
    assert WAITING not in first_status and WAITING not in page.locator("body").inner_text()
    second_report = json.loads(second.locator(".kb-doctor__json").text_content())
    assert [f["id"] for f in second_report["findings"]] == ["xid-79"] and second_report["input"]["lines"] == 1
    assert not watch.foreign
