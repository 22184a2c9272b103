"""The run explorer in JupyterLab (Chromium) while its run is being written, shown in two cells
(one widget, two views), and then the run dir written again by a new run (the user stopped the
script and ran it again into the same path): tests/browser/notebooks/run_rerun.ipynb.

Before the fix a step picked afterwards showed the new run's graph and numbers under the old
run's heatmap, silently. Now the page says the directory holds another
run; the page's own refresh (every few seconds while the run was written) says so on the status
line and prints nothing into the cells; ``w.refresh()`` raises the reader's error naming the
path and the fix."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from explorer_page import Explorer, explorer_page
from lab_server import LabServer
from playwright.sync_api import Browser
from run_page import RUN_ROOT, TIMEOUT_MS, RunView

NOTEBOOK = "run_rerun.ipynb"
NAN_STEP = 3  # the new run's NaN batch: the old one has none
ERRORS_IN_CELLS = """() => [...document.querySelectorAll('.jp-OutputArea-output')]
  .map((e) => e.innerText).filter((t) => /Traceback|Error|error/.test(t))"""


@pytest.fixture(scope="module")
def lab(chromium_browser: Browser, lab_server: LabServer) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as explorer:
        yield explorer
        explorer.run("writer.kill(); writer.wait()")


def test_two_views_follow_each_other_then_a_rerun_is_said_not_shown(lab: Explorer) -> None:
    page = lab.page
    first, second = (RunView(page, page.locator(RUN_ROOT).nth(k)) for k in (0, 1))
    layers = lab.value("w.run['layers']")
    for view in (first, second):
        view.wait_detail(0, "graph")  # opened on the run's one capture
    first.click_cell(NAN_STEP, layers.index("conv.0"))
    for view in (first, second):  # the second view follows the picked step
        view.wait_detail(NAN_STEP, "params")
    before = first.summary_rows()
    assert [r["cells"][5] for r in before] == ["0"] * len(before)  # no NaN in this run

    lab.run(
        "writer.kill(); writer.wait()\n"
        "import shutil; shutil.rmtree('runs/rerun')\n"
        "subprocess.run([sys.executable, str(TESTS / 'run_logs.py'), 'runs/rerun', '30',"
        f" '--nan-step', '{NAN_STEP}'], check=True, stderr=subprocess.DEVNULL)"
    )
    # The page's refresh timer (the old run was "running") asks the kernel: it says why not.
    status = first.root.get_by_test_id("pvw-run-status")
    page.wait_for_function(
        "(s) => s.textContent.includes('now holds another run')",
        arg=status.element_handle(), timeout=TIMEOUT_MS,
    )  # fmt: skip
    # The captured step 0's graph is read when picked: it was the new run's, shown as this one's.
    second.click_cell(0, layers.index("conv.0"))
    message = first.root.get_by_test_id("pvw-run-message")
    page.wait_for_function(
        "(m) => m.textContent.includes('now holds another run')",
        arg=message.element_handle(), timeout=TIMEOUT_MS,
    )  # fmt: skip
    assert first.data("steps") == second.data("steps")  # the old run's steps stay drawn
    said = lab.run("try:\n    w.refresh()\nexcept Exception as e:\n    print(type(e).__name__, e)")
    assert said.startswith("RunLogError") and "open it again" in said, said
    page.wait_for_timeout(6_000)  # another refresh tick: still nothing printed in the cells
    assert page.evaluate(ERRORS_IN_CELLS) == []
