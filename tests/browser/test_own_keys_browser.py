"""The widget's own controls keep their keys in JupyterLab and Notebook 7 (notebook
tests/browser/notebooks/grad_stats.ipynb: a LeNet trained with stats, so it has a Step slider).

Before the fix (js/ui/own_keys.ts) the notebook's command-mode shortcuts took them: ↓ on the
Step slider or the Depth list moved to another cell (the slider and the list unchanged, the
focus gone from the widget), and in Notebook 7 (which matches in the capture phase)
Shift+Enter in the search box ran the cell and added one below, and ↓ in the panel's tab strip
moved cells. Keys pressed outside the widget, and the ones its controls have no use for,
stay Jupyter's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from explorer_page import Explorer, explorer_page
from lab_server import LabServer, start_lab
from playwright.sync_api import Browser, expect

NOTEBOOK = "grad_stats.ipynb"
NOTEBOOK7_BUGS = (re.compile(r"reading 'schema'\)\s+at \S+/static/notebook/notebook_core\."),)
# The active cell's index, the number of cells, the notebook's mode and the focused element.
NOTEBOOK_JS = """() => {
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  const nb = document.querySelector('.jp-Notebook');
  const e = document.activeElement;
  return {
    active: cells.indexOf(document.querySelector('.jp-Notebook .jp-Cell.jp-mod-active')),
    cells: cells.length,
    edit: nb.classList.contains('jp-mod-editMode'),
    focus: e.dataset.testid ?? e.className,
  };
}"""


@pytest.fixture(scope="module", params=["lab", "notebook"])
def front(
    request: pytest.FixtureRequest,
    chromium_browser: Browser,
    lab_server: LabServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Explorer]:
    if request.param == "lab":
        with explorer_page(chromium_browser, lab_server, NOTEBOOK) as explorer:
            yield explorer
        return
    here = Path(__file__).resolve().parent / "notebooks"
    server = start_lab(tmp_path_factory.mktemp("own_keys_nb7"), here, app="notebook")
    try:
        with explorer_page(chromium_browser, server, NOTEBOOK, NOTEBOOK7_BUGS) as explorer:
            yield explorer
    finally:
        server.stop()


def press(explorer: Explorer, testid: str, key: str) -> tuple[dict, dict]:
    """Focus the control `testid`, press `key`: the notebook's state before and after."""
    page = explorer.page
    page.get_by_test_id(testid).first.focus()
    page.keyboard.press("Shift")  # a key press the front end may lose after load
    before = page.evaluate(NOTEBOOK_JS)
    assert before["focus"] == testid, before
    page.keyboard.press(key)
    page.wait_for_timeout(300)
    return before, page.evaluate(NOTEBOOK_JS)


def test_the_step_slider_and_the_depth_list_take_the_arrow_keys(front: Explorer) -> None:
    page = front.page
    step = page.get_by_test_id("pvw-step")
    last = step.input_value()
    before, after = press(front, "pvw-step", "ArrowDown")
    assert after == before, "the notebook took ↓ from the Step slider"
    assert int(step.input_value()) == int(last) - 1
    assert page.get_by_test_id("pvw-step-text").text_content() == str(int(last) - 1)
    press(front, "pvw-step", "End")
    assert step.input_value() == last

    depth = page.get_by_test_id("pvw-depth")
    shown = depth.input_value()
    before, after = press(front, "pvw-depth", "Home")
    assert after == before, "the notebook took Home from the Depth list"
    expect(depth).to_have_value("0")  # all collapsed, once the view is redrawn
    front.answered()
    front.wait_ready()
    press(front, "pvw-depth", "End")
    expect(depth).to_have_value(shown)
    front.answered()
    front.wait_ready()


def test_shift_enter_in_search_steps_back_and_runs_no_cell(front: Explorer) -> None:
    page = front.page
    page.get_by_test_id("pvw-search").fill("Add")
    count = page.get_by_test_id("pvw-search-count")
    page.wait_for_function(
        "(el) => /^1\\/\\d+$/.test(el.textContent)", arg=count.element_handle(), timeout=5000
    )
    total = int((count.text_content() or "").split("/")[1])
    before, after = press(front, "pvw-search", "Shift+Enter")
    assert after == before, "Shift+Enter in the search box ran the cell"
    assert count.text_content() == f"{total}/{total}"  # the previous match: the last
    before, after = press(front, "pvw-search", "Escape")
    assert after == before
    assert page.get_by_test_id("pvw-search").input_value() == ""


def test_the_tab_strip_takes_the_arrow_keys(front: Explorer) -> None:
    page = front.page
    page.get_by_test_id("pvw-tab-layers").click()
    before, after = press(front, "pvw-tab-layers", "ArrowDown")
    assert {**after, "focus": before["focus"]} == before, "the notebook took ↓ from the tabs"
    assert after["focus"] == "pvw-tab-flow"
    assert page.get_by_test_id("pvw-tab-flow").get_attribute("aria-selected") == "true"


def test_keys_outside_the_widget_stay_the_notebooks(front: Explorer) -> None:
    page = front.page
    # A toolbar button has no use for ↑: Jupyter's own move to the cell above stays.
    before, after = press(front, "pvw-fit", "ArrowUp")
    assert after["active"] == before["active"] - 1
    page.keyboard.press("b")  # command mode, a cell focused: a new cell below
    page.wait_for_function(
        f"() => document.querySelectorAll('.jp-Notebook .jp-Cell').length === {before['cells'] + 1}"
    )
