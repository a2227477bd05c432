"""Take full-page screenshots of built site pages with headless Chromium (for looking at pages).

Usage: python tools/screenshot.py SITE_DIR OUT_DIR PATH [PATH ...]
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # noqa: D102
        pass


def main() -> int:
    site, out, *paths = sys.argv[1:]
    Path(out).mkdir(parents=True, exist_ok=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=site))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for i, path in enumerate(paths):
            page.goto(base + path)
            page.wait_for_load_state("networkidle")
            name = Path(out) / f"{i:02d}-{path.strip('/').replace('/', '_') or 'home'}.png"
            page.screenshot(path=str(name), full_page=True)
            print(name)
        browser.close()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
