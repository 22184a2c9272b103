"""The widget in Notebook 7 (`jupyter notebook`, not JupyterLab): a traced LeNet
(tests/browser/notebooks/notebook7.ipynb, groups collapsed at first) is drawn, a click opens a
collapsed layer group, a click on a node opens the inspector, and ``w.expand(...)`` typed into
a new cell by keyboard and run with Shift+Enter redraws the page.

One Notebook 7 server and one notebook run serve the module. Expected views come from the
widget's payload (``w.graph``, read from the kernel) through tests/fixtures/graphs/payload.py,
which does not share code with the widget.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from explorer_page import Explorer, explorer_page
from fixtures.graphs.payload import chain, descendants, visible_clusters, visible_nodes
from graph_dicts import nested
from lab_page import DEADLINE_MISSED, HEARD_AGAIN, open_and_run_notebook, save_screenshot
from lab_server import LabServer, start_lab

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
NOTEBOOK = "notebook7.ipynb"
# Notebook 7.6's own bundle (JupyterLab's keyboard-shortcut plugin, in notebook_core) throws
# this while opening a notebook, before any cell has run: reading the settings schema of a
# plugin it is told has changed. Not the widget's; JupyterLab's page does not do it.
NOTEBOOK7_BUGS = (re.compile(r"reading 'schema'\)\s+at \S+/static/notebook/notebook_core\."),)

# Each code cell of the open notebook: its source and execution count (null: never ran).
CELLS_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter((cell) => cell.model.type === "code")
  .map((cell) => ({
    source: cell.model.sharedModel.getSource(), count: cell.model.executionCount,
  }))"""


@pytest.fixture(scope="module")
def notebook7_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    try:
        server = start_lab(tmp_path_factory.mktemp("notebook7"), NOTEBOOKS, app="notebook")
    except RuntimeError as exc:
        pytest.fail(f"Could not start Notebook 7 for the browser tests: {exc}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def nb7(chromium_browser, notebook7_server: LabServer) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, notebook7_server, NOTEBOOK, NOTEBOOK7_BUGS) as explorer:
        yield explorer


@pytest.fixture(scope="module")
def graph(nb7: Explorer) -> dict[str, Any]:
    payload = nested(nb7.value("w.graph"))  # sent as schema 2.0; read here nested
    assert len(payload["groups"]) > 5, "LeNet should come with its layer groups"
    return payload


def code_cells(nb7: Explorer) -> list[dict[str, Any]]:
    return nb7.page.evaluate(CELLS_JS)


def shown(graph: dict[str, Any], expanded: set[str]) -> set[str]:
    return {f"pvw-{i}" for i in visible_nodes(graph, expanded)}


def test_runs_in_notebook7_and_draws_the_graph(nb7: Explorer, graph: dict[str, Any]) -> None:
    # The page is Notebook 7's own application, not JupyterLab's.
    assert nb7.page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
    assert "/notebooks/" in nb7.page.url
    # Every code cell ran, in order, and the kernel holds the widget.
    counts = [cell["count"] for cell in code_cells(nb7)]
    assert len(counts) == 2 and all(counts) and counts == sorted(counts), counts
    assert nb7.value("type(w).__name__") == "GraphWidget"

    # depth=0: only the group around the whole model is open, so its layers are collapsed.
    expanded = set(nb7.value("w.expanded"))
    assert len(expanded) < len(graph["groups"])
    assert nb7.node_ids() == shown(graph, expanded)
    assert nb7.cluster_ids() == {f"pvw-{g}-cluster" for g in visible_clusters(graph, expanded)}
    status = nb7.root.get_by_test_id("pvw-status").inner_text()
    assert f"{len(visible_nodes(graph, expanded))} nodes" in status, status


def test_click_opens_a_collapsed_group(nb7: Explorer, graph: dict[str, Any]) -> None:
    nb7.set_expanded("w.collapse_all()")
    expanded = set(nb7.value("w.expanded"))
    on_screen = [
        g
        for g in graph["groups"]
        if g["id"] not in expanded and set(chain(graph, g["id"])[1:]) <= expanded
    ]
    group = max(on_screen, key=lambda g: len(descendants(graph, g["id"])))  # "conv" or "fc"
    gid = group["id"]
    assert nb7.element(f"pvw-{gid}-cluster").count() == 0

    nb7.redrawn(nb7.element(f"pvw-{gid}").click)
    assert nb7.element(f"pvw-{gid}-cluster").count() == 1
    assert nb7.node_ids() == shown(graph, expanded | {gid})
    assert set(nb7.value("w.expanded")) == expanded | {gid}


def test_click_on_a_node_opens_the_inspector(nb7: Explorer, graph: dict[str, Any]) -> None:
    nb7.reset()  # every group open, nothing selected, the whole graph in view
    node = next(
        n
        for n in graph["nodes"]
        if n["kind"] == "op" and n["group"] and any(e["target"] == n["id"] for e in graph["edges"])
    )
    nb7.element(f"pvw-{node['id']}").click()
    inspector = nb7.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    nb7.page.wait_for_function(
        "(id) => document.querySelector('[data-testid=pvw-inspector]').dataset.id === id",
        arg=node["id"],
    )
    text = inspector.inner_text()
    group = next(g for g in graph["groups"] if g["id"] == node["group"])
    assert node["name"] in text and group["name"] in text and group["type"] in text
    assert nb7.value("w.selected") == node["id"]


def test_expand_from_a_later_cell_redraws(nb7: Explorer, graph: dict[str, Any]) -> None:
    nb7.set_expanded("w.collapse_all()")
    nb7.run("w.selected = ''")
    closed = set(nb7.value("w.expanded"))
    fc = next(g for g in graph["groups"] if g["name"] == "fc")
    assert fc["id"] not in closed
    before_cells = code_cells(nb7)
    before = nb7.renders()

    # As a user would: command mode on the last cell, B for a new cell below, type, Shift+Enter.
    page = nb7.page
    page.locator(".jp-Notebook .jp-CodeCell").last.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jp-Notebook .jp-CodeCell').length === n",
        arg=len(before_cells) + 1,
    )
    page.keyboard.press("Enter")
    code = 'w.expand("fc")'
    page.keyboard.type(code)
    new = len(before_cells)  # the new cell's index among the code cells
    assert code_cells(nb7)[new]["source"] == code, "the keys typed did not all reach the cell"
    page.keyboard.press("Shift+Enter")  # runs it (and, being last, adds an empty cell below)
    nb7.wait_ready(after=before)

    # The new cell really ran, after the others, and the page now shows "fc" open.
    last = code_cells(nb7)[new]
    assert last["count"] and last["count"] > max(c["count"] for c in before_cells), last
    opened = closed | set(chain(graph, fc["id"]))
    assert set(nb7.value("w.expanded")) == opened
    assert nb7.element(f"pvw-{fc['id']}-cluster").count() == 1
    assert nb7.node_ids() == shown(graph, opened)
    page.get_by_test_id("pvw-fit").click()
    page.wait_for_timeout(400)  # the fit animates
    save_screenshot(page, "notebook7")


def test_a_widget_anywidget_gave_up_on_hears_its_kernel(
    chromium_browser: Any, notebook7_server: LabServer
) -> None:
    # anywidget's 2 s missed (test_busy_page_browser.py says when): the graph, sent after the
    # comm opened, and the kernel's view requests still arrive (js/anywidget_deadline.ts).
    late = "notebook7_late.ipynb"  # its own kernel: the module's page keeps the other
    (notebook7_server.root / late).write_text((NOTEBOOKS / NOTEBOOK).read_text())
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    said: list[str] = []
    page.on("console", lambda message: said.append(message.text))
    page.add_init_script(DEADLINE_MISSED)
    try:
        explorer = Explorer(page, open_and_run_notebook(page, notebook7_server, late).first)
        gid, name = explorer.value(
            "[(g['id'], g['name']) for g in w.graph['groups'] if g.get('parent')][0]"
        )
        explorer.set_expanded(f"w.expand({name!r})")
        assert gid in explorer.value("w.expanded"), "the page never answered the request"
        explorer.set_expanded("w.collapse_all()")
        assert gid not in explorer.value("w.expanded")
        assert any(HEARD_AGAIN in line for line in said), said
    finally:
        context.close()
        notebook7_server.shutdown_sessions()
