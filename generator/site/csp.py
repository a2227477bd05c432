"""Content-Security-Policy for the built site: this origin only, plus WebAssembly, no inline script.

Every script the site runs is a file of its own origin; the theme's few inline helpers are
replaced by files (overrides/partials/javascripts/, docs/javascripts/md-*.js). So the policy
lists no hashes at all: whatever a page happens to contain inline, it never runs, and the
build refuses such a page anyway (``generator.site.page_guard``). Each page gets the policy as a
<meta> tag while MkDocs writes it (static hosts that cannot set headers still enforce it), and
``_headers`` carries it for hosts that can send headers, so the worker script is covered too.
Both also say ``Referrer-Policy: no-referrer``: no request names the page it came from.
"""

from __future__ import annotations

import re
from pathlib import Path

META_MARK = '<meta http-equiv="Content-Security-Policy"'
POLICY = ("default-src 'self'; "
          "script-src 'self' 'wasm-unsafe-eval'; "
          "style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self'; "
          "object-src 'none'; base-uri 'self'; form-action 'self'")


# No request from a page names the page it came from: the search page's address may hold a pasted
# error line (in its fragment, which browsers leave out of Referer anyway), and an entry page's
# address says what the reader is looking into. Same origin or not, nothing needs the Referer.
REFERRER = "no-referrer"
REFERRER_META = f'<meta name="referrer" content="{REFERRER}">'


def inject(html: str) -> str:
    """The page with the policy as its first <meta> tag, and the referrer policy after it."""
    meta = f'{META_MARK} content="{POLICY}">'
    if META_MARK in html:
        html = re.sub(re.escape(META_MARK) + r'[^>]*>', meta, html, count=1)
    else:
        html = html.replace("<head>", "<head>\n    " + meta, 1)
    if REFERRER_META not in html:
        html = html.replace(meta, meta + "\n    " + REFERRER_META, 1)
    return html


def write_headers(site: Path) -> str:
    """_headers for hosts that can send headers (frame-ancestors works only as a header)."""
    (site / "_headers").write_text(f"/*\n  Content-Security-Policy: {POLICY}; frame-ancestors 'self'\n"
                                   f"  Referrer-Policy: {REFERRER}\n  X-Content-Type-Options: nosniff\n", encoding="utf-8")
    return POLICY
