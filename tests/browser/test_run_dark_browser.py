"""The run explorer's red text in JupyterLab's dark and light themes (notebook
tests/browser/notebooks/bb23e_run_dark.ipynb, a watched LeNet run with a NaN batch at step 137;
Dark High Contrast and the legend's "0" key added by bb25d).

Before the fix the NaN parameter's row in the step's table (the row a user looks for) was
#d62728 on the dark theme's lit row, 3.1:1, and the legend's "problem" key 3.8:1 on its
panel: now both are mixed towards the text colour, as the graph explorer's red text is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from contrast import CONTRAST_JS
from explorer_page import Explorer, explorer_page
from lab_server import LabServer
from playwright.sync_api import Browser
from run_page import RUN_ROOT, RunView, write_run

NOTEBOOK = "bb23e_run_dark.ipynb"
NAN_STEP = 137  # tests/run_logs.py's NaN batch: conv.0's gradients hold NaN


@pytest.fixture(scope="module")
def lab(chromium_browser: Browser, lab_server: LabServer) -> Iterator[Explorer]:
    write_run(lab_server.root / "runs" / "bb23e_dark", NAN_STEP + 3)
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as explorer:
        yield explorer
        explorer.set_theme("JupyterLab Light")


@pytest.mark.parametrize(
    "theme", ["JupyterLab Dark", "JupyterLab Light", "JupyterLab Dark High Contrast"]
)
def test_the_nan_row_and_the_problem_key_are_readable(lab: Explorer, theme: str) -> None:
    lab.set_theme(theme)
    view = RunView(lab.page, lab.page.locator(RUN_ROOT))
    lab.run(f"w.step = {NAN_STEP}; w.layer = 'conv.0'")  # its row lit, as a click leaves it
    view.wait_detail(NAN_STEP, "params")
    bad = view.root.locator("[data-testid=pvw-run-summary] tr.pvw-run-bad")
    params = bad.evaluate_all("(rows) => rows.map((r) => r.dataset.param)")
    assert params and all(p.startswith("conv.0.") for p in params), params
    assert "pvw-run-lit" in (bad.first.get_attribute("class") or "")
    # The legend's "0" key (bb25d): white on the zero cells' grey was 2.7:1 in every theme.
    keys = [view.root.locator(f".pvw-run-key-{kind}") for kind in ("mark", "zero")]
    for el in (bad.first.locator("td").first, *keys):
        assert el.evaluate(CONTRAST_JS) >= 4.5, (theme, el)
