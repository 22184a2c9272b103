"""The saved run page (file://, Chromium) of a float16 run under paddle.amp.GradScaler
(tests/grad_scaler_run.py: Paddle's own AMP code made to run on this CPU; its scale 2**16
overflows at steps 0 and 1, which the scaler skips): those steps are information, so the page
opens on the last full capture, not on the capture after step 0, says "No problems found"
(the status line too: "0 problems (2 for information)"),
lists the information in its picker, and draws no red problem tick over step 0 (its cells
are red: their gradients held Inf)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from playwright.sync_api import Browser
from run_page import NONFINITE_RGB, PIXEL_JS, RunView, saved_run_page

RUNNER = Path(__file__).resolve().parent.parent / "grad_scaler_run.py"


def test_steps_the_scaler_skipped_are_shown_as_information(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    run_dir, page_file = tmp_path / "run", tmp_path / "run.html"
    subprocess.run([sys.executable, str(RUNNER), str(run_dir), "overflow",
                    str(tmp_path / "oracle.json")], check=True, timeout=600)  # fmt: skip
    subprocess.run([sys.executable, "-m", "paddleviz_widget", "view", str(run_dir), "-o",
                    str(page_file)], check=True, timeout=300)  # fmt: skip
    with saved_run_page(chromium_browser, page_file) as (page, root):
        view = RunView(page, root)
        view.wait_detail(25, "graph")  # the last full capture (every=5, 30 steps)
        picker = view.root.get_by_test_id("pvw-run-problems")
        assert picker.locator("option").first.inner_text() == "No problems found"
        assert "for information: the GradScaler skips this step" in picker.inner_text()
        # Those lines sit in a group of their own, not among problems.
        groups = picker.evaluate(
            "(s) => [...s.children].map((c) => [c.tagName, c.label || c.text, c.children.length])"
        )
        assert groups[0] == ["OPTION", "No problems found", 0], groups
        assert [g[:2] for g in groups[1:]] == [["OPTGROUP", "for information"]], groups
        assert groups[1][2] >= 1, groups
        # The status line agrees: it counted those steps as problems ("2 problems").
        status = view.root.get_by_test_id("pvw-run-status").inner_text()
        assert f"; 0 problems ({groups[1][2]} for information); " in status, status
        x, y = view.cell(0, 2)  # layers "0", "2", "4": 4.weight held the Inf
        assert view.pixel(0, 2) == NONFINITE_RGB
        top = view.heatmap.evaluate("(c) => c.getBoundingClientRect().top")
        tick = view.heatmap.evaluate("(c, [x, y]) => (" + PIXEL_JS + ")([c, x, y])", [x, top + 1])
        assert tick != NONFINITE_RGB, "a step the scaler skipped drew a red problem tick"
