"""Serve a built site on 127.0.0.1 for browser tests and benchmarks, with its CSP header.

Every response carries the Content-Security-Policy from the site's ``_headers`` file, as a
host that honours it would send it, so the worker script is held to the policy too.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path


class _Handler(http.server.SimpleHTTPRequestHandler):
    csp = ""
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".wasm": "application/wasm", ".js": "text/javascript"}

    def end_headers(self) -> None:  # noqa: D102
        if self.csp:
            self.send_header("Content-Security-Policy", self.csp)
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, *args) -> None:  # noqa: D102
        pass


class SiteServer:
    def __init__(self, site: Path):
        headers = (site / "_headers").read_text(encoding="utf-8") if (site / "_headers").exists() else ""
        csp = next((line.split(":", 1)[1].strip() for line in headers.splitlines()
                    if line.strip().startswith("Content-Security-Policy:")), "")
        handler = type("Handler", (_Handler,), {"csp": csp})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "SiteServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.thread.join()
        self.httpd.server_close()
