"""Content-Security-Policy for the built site: this origin only, plus WebAssembly.

The theme puts three small inline scripts in every page; rather than allowing inline
script in general, the policy lists the SHA-256 of each one. Each page gets its policy as a
<meta> tag while MkDocs writes it (static hosts that cannot set headers still enforce it),
and ``_headers`` carries one policy for hosts that can send headers, so the worker script is
covered too.
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


def inject(html: str) -> tuple[str, set[str]]:
    """The page with its policy as a <meta> tag (listing only its own inline scripts), and those hashes."""
    hashes = inline_script_hashes(html)
    meta = f'{META_MARK} content="{policy(hashes)}">'
    if META_MARK in html:
        return re.sub(re.escape(META_MARK) + r'[^>]*>', meta, html, count=1), hashes
    return html.replace("<head>", "<head>\n    " + meta, 1), hashes


def write_headers(site: Path, hashes: set[str]) -> str:
    """_headers for hosts that can send headers: one policy covering every page's inline scripts."""
    csp = policy(hashes)
    # frame-ancestors only works as a header (browsers ignore it in <meta>)
    (site / "_headers").write_text(f"/*\n  Content-Security-Policy: {csp}; frame-ancestors 'self'\n"
                                   "  X-Content-Type-Options: nosniff\n", encoding="utf-8")
    return csp
