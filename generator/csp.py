"""Content-Security-Policy for the built site: this origin only, plus WebAssembly.

The theme puts three small inline scripts in every page; rather than allowing inline
script in general, the policy lists the SHA-256 of each one. One policy serves the whole
site: it goes into every page as a <meta> tag (static hosts that cannot set headers still
enforce it) and into ``_headers`` for hosts that can, so the worker script is covered too.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>(.*?)</script>", re.S)
META_MARK = '<meta http-equiv="Content-Security-Policy"'


def inline_script_hashes(html: str) -> set[str]:
    return {"'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
            for body in _INLINE_SCRIPT.findall(html)}


def policy(hashes: set[str]) -> str:
    scripts = " ".join(["'self'", "'wasm-unsafe-eval'", *sorted(hashes)])
    return ("default-src 'self'; "
            f"script-src {scripts}; "
            "style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self'; "
            "object-src 'none'; base-uri 'self'; form-action 'self'")


def apply(site: Path) -> str:
    """Insert the policy into every page, write _headers; returns the policy."""
    pages = sorted(site.rglob("*.html"))
    texts = {p: p.read_text(encoding="utf-8") for p in pages}
    hashes: set[str] = set()
    for text in texts.values():
        hashes |= inline_script_hashes(text)
    csp = policy(hashes)
    meta = f'{META_MARK} content="{csp}">'
    for path, text in texts.items():
        if META_MARK in text:
            text = re.sub(re.escape(META_MARK) + r'[^>]*>', meta, text, count=1)
        else:
            text = text.replace("<head>", "<head>\n    " + meta, 1)
        path.write_text(text, encoding="utf-8")
    # frame-ancestors only works as a header (browsers ignore it in <meta>)
    (site / "_headers").write_text(f"/*\n  Content-Security-Policy: {csp}; frame-ancestors 'self'\n"
                                   "  X-Content-Type-Options: nosniff\n",
                                   encoding="utf-8")
    return csp
