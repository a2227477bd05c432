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
    prefix = ""  # the path the site is served under, as a host would serve it (e.g. /atlas/)

    def translate_path(self, path: str) -> str:  # noqa: D102
        clean = path.split("?", 1)[0].split("#", 1)[0]
        if self.prefix and clean.startswith(self.prefix):
            path = "/" + path[len(self.prefix):]
        elif self.prefix:
            path = "/__outside_the_site__/"
        return super().translate_path(path)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A missing address gets the site's own 404.html, with status 404, as static hosts do."""
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
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
    def __init__(self, site: Path, prefix: str = ""):
        headers = (site / "_headers").read_text(encoding="utf-8") if (site / "_headers").exists() else ""
        csp = next((line.split(":", 1)[1].strip() for line in headers.splitlines()
                    if line.strip().startswith("Content-Security-Policy:")), "")
        handler = type("Handler", (_Handler,), {"csp": csp, "prefix": prefix})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{prefix.rstrip('/')}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "SiteServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.thread.join()
        self.httpd.server_close()
