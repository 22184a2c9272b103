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


def test_a_cell_run_again_lets_the_old_explorer_go(life: Explorer) -> None:
    page = life.page
    page.evaluate("() => { window.pvwOldRoots = []; }")
    for _ in range(3):
        # The shown explorer, watched without being kept, and the kernel's view answered.
        page.evaluate(
            "(sel) => window.pvwOldRoots.push(new WeakRef(document.querySelector(sel)))", ROOT
        )
        outputs = run_cell(life, WIDGET_CELL)
        assert not [o for o in outputs if "stderr" in o["mime"] or "error" in o["mime"]], outputs
        page.wait_for_function(
            """(sel) => {
              const roots = document.querySelectorAll(sel);
              const old = window.pvwOldRoots.at(-1).deref();
              return roots.length === 1 && roots[0] !== old && roots[0].dataset.state === "ready";
            }""",
            arg=ROOT,
        )
        life.answered()
    assert page.locator(ROOT).count() == 1
    collect_garbage(life)
    kept = page.evaluate("() => window.pvwOldRoots.filter((ref) => ref.deref()).length")
    assert kept == 0, f"{kept} of the 3 explorers the cell's runs replaced are still in memory"
    # The newest widget still follows its kernel.
    (conv,) = life.value("w._groups.resolve('conv')")
    life.set_expanded("w.expand('conv')")
    assert f"pvw-{conv}-cluster" in life.cluster_ids()


def test_a_closed_widget_shown_says_so(life: Explorer) -> None:
    cell = life.page.evaluate(ADD_CELL_JS)
    outputs = run_cell(life, cell, "c = GraphWidget.from_graph(doc)\nc.close()\nc")
    assert [o["mime"] for o in outputs] == ["text/plain"], outputs
    assert "closed: w.close() was called" in outputs[0]["text"], outputs
