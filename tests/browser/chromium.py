"""Where the tests find Chromium and the flags they start it with (headless, and offline but
for loopback). Shared by tests/browser/conftest.py and tests outside tests/browser."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # Nothing but loopback resolves, so a request to the internet (a CDN, a news feed)
    # fails in the test the same way it would fail for an offline user.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def chromium_path() -> str:
    """The Chromium to drive: $PVW_CHROMIUM, else the first one installed. RuntimeError (saying
    how to fix it) if there is none."""
    explicit = os.environ.get("PVW_CHROMIUM")
    candidates = [explicit] if explicit else [*CHROMIUM_CANDIDATES, shutil.which("chromium")]
    for path in candidates:
        if path and Path(path).is_file():
            return path
    raise RuntimeError(
        f"Chromium not found (looked at {', '.join(p for p in candidates if p)}); the browser "
        "tests need it. Install it or set PVW_CHROMIUM=/path/to/chromium."
    )
