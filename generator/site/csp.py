"""Content-Security-Policy for the built site: this origin only, plus WebAssembly, no inline script.

Every script the site runs is a file of its own origin; the theme's few inline helpers are
replaced by files (overrides/partials/javascripts/, docs/javascripts/md-*.js). So the policy
lists no hashes at all: whatever a page happens to contain inline, it never runs, and the
build refuses such a page anyway (``generator.site.page_guard``). Each page gets the policy as a
<meta> tag while MkDocs writes it (static hosts that cannot set headers still enforce it), and
``_headers`` carries it for hosts that can send headers, so the worker script is covered too.
"""

from __future__ import annotations

import re
from pathlib import Path

META_MARK = '<meta http-equiv="Content-Security-Policy"'
POLICY = ("default-src 'self'; "
          "script-src 'self' 'wasm-unsafe-eval'; "
          "style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self'; "
          "object-src 'none'; base-uri 'self'; form-action 'self'")


def inject(html: str) -> str:
    """The page with the policy as its first <meta> tag."""
    meta = f'{META_MARK} content="{POLICY}">'
    if META_MARK in html:
        return re.sub(re.escape(META_MARK) + r'[^>]*>', meta, html, count=1)
    return html.replace("<head>", "<head>\n    " + meta, 1)


def write_headers(site: Path) -> str:
    """_headers for hosts that can send headers (frame-ancestors works only as a header)."""
    (site / "_headers").write_text(f"/*\n  Content-Security-Policy: {POLICY}; frame-ancestors 'self'\n"
                                   "  X-Content-Type-Options: nosniff\n", encoding="utf-8")
    return POLICY
