"""An RE2-based scanner for the CLI: all anchors in one linear-time pass over each chunk.

google-re2 compiles the anchor literals into one automaton, so the cost no longer grows
with the number of anchors. It is optional: without the package the matcher's pure-Python
scanner is used, and the browser always uses that one (Pyodide has no RE2).
"""

from __future__ import annotations

import re

try:  # optional dependency
    import re2  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - exercised when google-re2 is absent
    re2 = None


def available() -> bool:
    return re2 is not None


class Re2Scanner:
    def __init__(self, anchors: list[tuple[str, bool]]):
        if re2 is None:
            raise RuntimeError("google-re2 is not installed")
        parts = []
        for text, ignore_case in dict.fromkeys(anchors):
            if not text:
                continue
            escaped = re.escape(text).encode()
            parts.append(b"(?i:" + escaped + b")" if ignore_case else escaped)
        options = re2.Options()
        options.max_mem = 256 << 20
        self._rx = re2.compile(b"|".join(parts) or rb"\b\B", options)  # \b\B never matches

    def candidate_lines(self, data: bytes) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        search = self._rx.search
        pos = 0
        size = len(data)
        while pos < size:
            m = search(data, pos)
            if m is None:
                break
            start = data.rfind(b"\n", 0, m.start()) + 1
            end = data.find(b"\n", m.end())
            end = size if end < 0 else end
            out.append((start, end))
            pos = end + 1
        return out
