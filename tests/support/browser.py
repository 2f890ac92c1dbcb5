"""The headless system Chromium the HTML report is checked in (browser tests, the scale benchmark).

Debian's ``chromium`` package, driven by Playwright for Python; Playwright's own browser
download is never used (it cannot work offline).
"""

from __future__ import annotations

import os
from typing import Any

CHROMIUM = os.environ.get("CONFLICTSCORE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def launch(playwright: Any) -> Any:
    """A headless system Chromium from a started ``sync_playwright()``."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
