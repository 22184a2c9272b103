"""A GraphWidget's life in a JupyterLab page beyond one run of its cell
(tests/browser/notebooks/widget_life.ipynb: LeNet's saved graph in ``w``, groups collapsed):
the widget's cell run again lets the page drop the explorer it replaced, and a closed widget
shown says so. One page and kernel serve the module.

Each old explorer is watched through a WeakRef to its root element, a fact about the page's
heap that the widget's code cannot fake: the front end keeps a removed view's element while
its model lives (the old widget's, alive in the kernel until closed), so an explorer left in
that element kept its graph, its drawing and its listeners for every run of the cell.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from explorer_page import ROOT, Explorer, explorer_page
from run_page import RUN_ROOT, write_run

NOTEBOOK = "widget_life.ipynb"
WIDGET_CELL = 2  # the notebook's cell that makes and shows `w`

# Run a cell of the open notebook (by index) through the command registry, as Shift+Enter
# would; resolves once it has run. `src`, if given, replaces the cell's source first.
RUN_CELL_JS = """async ([index, src]) => {
  const app = window.jupyterapp, notebook = app.shell.currentWidget.content;
  notebook.activeCellIndex = index;
  if (src !== null) notebook.activeCell.model.sharedModel.setSource(src);
  await app.commands.execute("notebook:run-cell");
  return Array.from(notebook.activeCell.node.querySelectorAll(".jp-OutputArea-output"))
    .map((el) => ({ mime: el.dataset.mimeType || "", text: el.innerText }));
}"""
# `count` widgets of `sel` on the page, each drawn (its data attribute `ready` set).
DRAWN_JS = """([sel, ready, count]) => {
  const roots = Array.from(document.querySelectorAll(sel));
  return roots.length === count && roots.every((root) => root.matches(`[data-${ready}]`));
}"""
# A new code cell below the last one.
ADD_CELL_JS = """async () => {
  const app = window.jupyterapp, notebook = app.shell.currentWidget.content;
  notebook.activeCellIndex = notebook.widgets.length - 1;
  await app.commands.execute("notebook:insert-cell-below");
  return notebook.activeCellIndex;
}"""


@pytest.fixture(scope="module")
def life(chromium_browser: Any, lab_server: Any) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as explorer:
        yield explorer


def run_cell(life: Explorer, index: int, src: str | None = None) -> list[dict[str, str]]:
    return life.page.evaluate(RUN_CELL_JS, [index, src])


def collect_garbage(life: Explorer) -> None:
    cdp = life.page.context.new_cdp_session(life.page)
    try:
        for _ in range(2):  # a second pass for what the first one's finalizers let go
            cdp.send("HeapProfiler.collectGarbage")
    finally:
        cdp.detach()


def rerun_thrice_and_count_kept(life: Explorer, cell: int, root: str, ready: str) -> int:
    """Run ``cell`` 3 times, each once its widget (``root``) is drawn (``ready``: the data
    attribute set then); how many of the 3 explorers those runs replaced are still in the
    page's memory after collections over 10 s."""
    page = life.page
    page.evaluate("() => { window.pvwOldRoots = []; }")
    for _ in range(3):
        page.wait_for_function(DRAWN_JS, arg=[root, ready, 1])
        # The shown explorer, watched without being kept.
        page.evaluate(
            "(sel) => window.pvwOldRoots.push(new WeakRef(document.querySelector(sel)))", root
        )
        outputs = run_cell(life, cell)
        assert not [o for o in outputs if "stderr" in o["mime"] or "error" in o["mime"]], outputs
        page.wait_for_function(
            "(sel) => document.querySelector(sel) !== window.pvwOldRoots.at(-1).deref()", arg=root
        )
    page.wait_for_function(DRAWN_JS, arg=[root, ready, 1])
    # Collected within 10 s: a request or a draw the old explorer had under way when it was
    # replaced holds it until it settles (a CI run at load ~6 once found 1 of 3 at once).
    for _ in range(10):
        collect_garbage(life)
        kept = page.evaluate("() => window.pvwOldRoots.filter((ref) => ref.deref()).length")
        if kept == 0:
            break
        page.wait_for_timeout(1000)
    return kept


def test_a_cell_run_again_lets_the_old_explorer_go(life: Explorer) -> None:
    kept = rerun_thrice_and_count_kept(life, WIDGET_CELL, ROOT, "state=ready")
    assert kept == 0, f"{kept} of the 3 explorers the cell's runs replaced are still in memory"
    assert life.page.locator(ROOT).count() == 1
    # The newest widget still follows its kernel.
    (conv,) = life.value("w._groups.resolve('conv')")
    life.set_expanded("w.expand('conv')")
    assert f"pvw-{conv}-cluster" in life.cluster_ids()


def test_a_closed_widget_shown_says_so(life: Explorer) -> None:
    # Shown and drawn first (anywidget 0.11 itself throws, 2 s on, for a model closed before
    # the page loaded its module: a plain AnyWidget made and closed in one cell does it too).
    cell = life.page.evaluate(ADD_CELL_JS)
    run_cell(life, cell, "c = GraphWidget.from_graph(doc)\nc")
    life.page.wait_for_function(DRAWN_JS, arg=[ROOT, "state=ready", 2])
    outputs = run_cell(life, cell, "c.close()\nc")
    life.page.wait_for_function(DRAWN_JS, arg=[ROOT, "state=ready", 1])  # its view is gone
    assert [o["mime"] for o in outputs] == ["text/plain"], outputs
    assert "closed: w.close() was called" in outputs[0]["text"], outputs


def test_a_run_explorer_cell_run_again_lets_the_old_one_go(life: Explorer, lab_server: Any) -> None:
    write_run(lab_server.root / "runs" / "life", 12)  # a LeNet watched for 12 steps
    cell = life.page.evaluate(ADD_CELL_JS)
    run_cell(life, cell, 'r = GraphWidget.from_run("runs/life", height=500)\nr')
    kept = rerun_thrice_and_count_kept(life, cell, RUN_ROOT, "steps")
    assert kept == 0, f"{kept} of the 3 run explorers the cell's runs replaced are still in memory"
