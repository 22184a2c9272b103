"""A run whose backbone was unfrozen mid-run, as its saved page shows it (file://, offline):
the status line says which parameters made trainable after the start are not recorded
(runs/unwatched.py; the line's words: js/view/run_status.test.ts)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from playwright.sync_api import Browser
from run_models import unfreezing_run
from run_page import TIMEOUT_MS, saved_run_page


def test_the_saved_page_says_unfrozen_parameters_are_not_recorded(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    unfreezing_run(run, {7: 0}, steps=15, every=10)
    out = tmp_path / "run.html"
    subprocess.run([sys.executable, "-m", "paddleviz_widget", "view", str(run), "-o", str(out)],
                   check=True, timeout=300)  # fmt: skip
    with saved_run_page(chromium_browser, out) as (page, root):
        status = root.get_by_test_id("pvw-run-status")
        page.wait_for_function(
            "(s) => s.textContent.includes('run finished')", arg=status.element_handle(),
            timeout=TIMEOUT_MS,
        )  # fmt: skip
        text = status.inner_text()
        assert "15 steps" in text and "2 parameters," in text, text  # the head's two columns
        assert text.endswith(
            "; 2 parameters made trainable after the run started not recorded (seen at step "
            "10): 0.weight, 0.bias"
        ), text
