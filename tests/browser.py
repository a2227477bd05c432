"""Shared setup for browser tests: Debian's Chromium driven by Playwright.

Playwright cannot download browsers here, so it always drives /usr/bin/chromium. Without
it the browser tests skip, except under CI (the CI variable set), where they must run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--disable-background-networking", "--disable-component-update", "--no-first-run",
               "--disable-sync", "--disable-quic"]


def require_chromium() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("CI"):
        pytest.fail("CI is set but /usr/bin/chromium is missing: .ci/run must apt-get install chromium")
    pytest.skip("browser tests need Debian's chromium at /usr/bin/chromium (apt-get install chromium)")


def launch(playwright):
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
