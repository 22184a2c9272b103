"""A run killed by SIGKILL (run.json still "running"), read on another host: the saved page's
status line says how long the run has been silent, and past a while that its process may be
gone (tests/test_run_silent.py makes the run; the words: js/view/run_status.test.ts)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import Browser
from run_page import TIMEOUT_MS, saved_run_page
from test_run_silent import killed_run


def _status(browser: Browser, page_file: Path) -> str:
    with saved_run_page(browser, page_file) as (page, root):
        status = root.get_by_test_id("pvw-run-status")
        page.wait_for_function(
            "(s) => s.textContent.includes('steps')", arg=status.element_handle(),
            timeout=TIMEOUT_MS,
        )  # fmt: skip
        return status.inner_text()


def test_the_saved_page_says_when_a_running_run_last_wrote_a_step(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    run_dir = killed_run(tmp_path)
    meta = json.loads((run_dir / "run.json").read_text())
    meta["host"] = "another-host"  # as read elsewhere: no pid to look for
    (run_dir / "run.json").write_text(json.dumps(meta))
    tail = run_dir / "tail.jsonl"
    out = tmp_path / "run.html"
    said = []
    for ago in (41, 3 * 3600):  # the last step's line written that long before the page
        now = time.time()
        os.utime(tail, (now - ago, now - ago))
        subprocess.run([sys.executable, "-m", "paddleviz_widget", "view", str(run_dir), "-o",
                        str(out), "--force"], check=True, timeout=300)  # fmt: skip
        said.append(_status(chromium_browser, out))
    assert re.search(r"; run running, last step 4\d s ago$", said[0]), said[0]
    assert said[1].endswith(
        "; run.json says running, but no step written for 3 h: the process may be gone "
        "(killed, or ended without closing its log)"
    ), said[1]
