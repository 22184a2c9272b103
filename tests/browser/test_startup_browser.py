"""A cell's start-up (issue 22, item 1), in JupyterLab: ``GraphWidget(y)`` opens its comm before
it builds the graph, so the page loads the front end (bundle, Graphviz WASM, layout worker)
while the kernel builds; the graph follows in an update, before the display. One layout worker
and one WASM compile serve every widget of the page, and so does one import of the explorer's
bundle (js/widget_loader.ts), though anywidget imports each widget's `_esm` afresh. Messages
are read as the page receives them (the kernel connection's ``anyMessage``), the start-up from
the page's performance marks (js/layout/shared.ts).

Before any widget, importing the widget module opens one hidden model (widget/page_preload.py):
the page imports the explorer and starts its worker then, while the user's next cells run, and
the kernel closes the model once the page says so."""

from __future__ import annotations

import shutil

from explorer_page import NOTEBOOKS
from lab_page import WIDGET_ROOT, NotebookRunError, page_problems

NOTEBOOK = "startup.ipynb"

# Every message the page gets from the kernel about widgets and displays, in order.
RECORD_JS = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  window.pvwMessages = [];
  kernel.anyMessage.connect((_, { msg, direction }) => {
    const type = msg.header.msg_type;
    const kinds = ["comm_open", "comm_msg", "comm_close", "display_data"];
    if (direction !== "recv" || !kinds.includes(type)) return;
    const data = msg.content.data || {};
    const paths = (data.buffer_paths || []).map((p) => p.join("."));
    const sizes = (msg.buffers || []).map((b) => b.byteLength);
    const at = paths.indexOf("graph");
    const view = data["application/vnd.jupyter.widget-view+json"];
    window.pvwMessages.push({
      type, comm: msg.content.comm_id || (view && view.model_id) || null,
      module: (data.state || {})._model_name || null,
      graphBytes: at >= 0 ? sizes[at] : null,
      preload: Boolean((data.state || {})._preload), at: performance.now(),
    });
  });
}"""
RUN_ALL_JS = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.ready;
  return await window.jupyterapp.commands.execute("notebook:run-all-cells");
}"""
# When the bundle was evaluated, the worker started and Graphviz compiled (each a list of times).
STARTED_JS = """() => Object.fromEntries(["pvw:bundle", "pvw:worker-start", "pvw:wasm-compile"]
  .map((name) => [name, performance.getEntriesByName(name).map((e) => e.startTime)]))"""
DRAWN_JS = """() => [...document.querySelectorAll("[data-testid=pvw-root]")].map((r) => ({
  state: r.dataset.state, layout: r.dataset.layout, renders: r.dataset.renders,
  nodes: r.querySelectorAll("[data-testid=pvw-graph] svg g.node").length }))"""


def _open(page, lab_server, notebook: str) -> None:
    """``notebook`` (from tests/browser/notebooks) open in Lab, its kernel connected."""
    shutil.copy(NOTEBOOKS / notebook, lab_server.root / notebook)
    page.goto(lab_server.url(lab_server.notebook_path(notebook)))
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel); }",
        timeout=120_000,
    )


def test_the_page_loads_while_the_kernel_builds_and_one_worker_serves_every_widget(
    page, lab_server
):
    _open(page, lab_server, NOTEBOOK)
    page.evaluate(RECORD_JS)
    if page.evaluate(RUN_ALL_JS) is not True:
        raise NotebookRunError(f"{NOTEBOOK} did not run:\n{page_problems(page)}")
    page.wait_for_function(
        f"() => document.querySelectorAll('{WIDGET_ROOT}[data-state=ready]').length === 2",
        timeout=120_000,
    )
    drawn = page.evaluate(DRAWN_JS)
    assert [d["state"] for d in drawn] == ["ready", "ready"], page_problems(page)
    assert all(d["nodes"] > 0 and d["layout"] == "worker" for d in drawn), drawn
    # One drawing each: the empty placeholder graph the comm opens with is never drawn.
    assert [d["renders"] for d in drawn] == ["1", "1"], drawn

    # The import cell opened the hidden model first; the kernel closed it once told.
    messages = page.evaluate("() => window.pvwMessages")
    opened = [m for m in messages if m["type"] == "comm_open" and m["module"] == "AnyModel"]
    assert len(opened) == 3 and opened[0]["preload"], messages
    hidden = [m for m in messages if m["comm"] == opened[0]["comm"]]
    assert [m["type"] for m in hidden] == ["comm_open", "comm_close"], hidden

    # Each widget: its comm opens without the graph, the graph follows in an update, and
    # only then is the widget displayed.
    for comm in (m["comm"] for m in opened[1:]):
        assert not any(m["preload"] for m in messages if m["comm"] == comm)
        mine = [m for m in messages if m["comm"] == comm]
        kinds = [m["type"] for m in mine]
        assert kinds[0] == "comm_open" and "display_data" in kinds, mine
        shown = kinds.index("display_data")
        assert mine[0]["graphBytes"] == len(b"{}"), mine[0]  # opened before the graph is built
        updates = [m["graphBytes"] or 0 for m in mine[1:shown] if m["type"] == "comm_msg"]
        assert any(size > 5_000 for size in updates), mine  # LeNet's (~8 kB), before display

    # The bundle was evaluated, the worker started and Graphviz compiled, each once.
    marks = {name: len(at) for name, at in page.evaluate(STARTED_JS).items()}
    assert marks == {"pvw:bundle": 1, "pvw:worker-start": 1, "pvw:wasm-compile": 1}, marks


PRELOAD_NOTEBOOK = "preload.ipynb"
# The recorded messages of comms the kernel opened: the kernel also closes the widget manager's
# control comm, which the page opens as it connects, until ipywidgets is imported.
OWN_MESSAGES_JS = """() => { const mine = new Set(window.pvwMessages
  .filter((m) => m.type === "comm_open").map((m) => m.comm));
  return window.pvwMessages.filter((m) => mine.has(m.comm)); }"""
RUN_CELL_JS = """async (index) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  nb.activeCellIndex = index;
  return await window.jupyterapp.commands.execute("notebook:run-cell");
}"""
CELL_OUTPUTS_JS = """(index) => window.jupyterapp.shell.currentWidget.content.widgets[index]
  .model.outputs.toJSON()"""


def test_importing_the_package_starts_the_explorer_before_the_first_widget(page, lab_server):
    _open(page, lab_server, PRELOAD_NOTEBOOK)
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.ready")
    assert page.evaluate(RUN_CELL_JS, 1) is True, page_problems(page)  # Paddle, its warnings
    page.evaluate(RECORD_JS)
    # The package's import alone (notebook_start.py), as a notebook imports it for `trace`.
    assert page.evaluate(RUN_CELL_JS, 2) is True, page_problems(page)

    # Only the import cell has run: the page has the explorer, its worker and Graphviz, and
    # the hidden model is closed; nothing is shown or printed.
    page.wait_for_function(f"() => ({OWN_MESSAGES_JS})().length === 4", timeout=60_000)
    started = page.evaluate(STARTED_JS)
    assert {name: len(at) for name, at in started.items()} == {
        "pvw:bundle": 1,
        "pvw:worker-start": 1,
        "pvw:wasm-compile": 1,
    }, started
    assert page.locator(WIDGET_ROOT).count() == 0
    assert page.evaluate(CELL_OUTPUTS_JS, 2) == []
    messages = page.evaluate(OWN_MESSAGES_JS)
    assert [(m["type"], m["module"], m["preload"]) for m in messages] == [
        ("comm_open", "LayoutModel", False),  # the DOMWidget's Layout, closed with it
        ("comm_open", "AnyModel", True),
        ("comm_close", None, False),
        ("comm_close", None, False),
    ], messages
    assert {m["comm"] for m in messages[:2]} == {m["comm"] for m in messages[2:]}

    # The model's cell (GraphWidget and trace imported, backward run) opens nothing more.
    assert page.evaluate(RUN_CELL_JS, 3) is True, page_problems(page)
    assert len(page.evaluate(OWN_MESSAGES_JS)) == 4
    assert page.evaluate(CELL_OUTPUTS_JS, 3) == []

    # The widget's cell: drawn by the worker already running, the bundle not evaluated again.
    assert page.evaluate(RUN_CELL_JS, 4) is True, page_problems(page)
    page.wait_for_selector(f"{WIDGET_ROOT}[data-state=ready]", timeout=60_000)
    drawn = page.evaluate(DRAWN_JS)
    assert len(drawn) == 1 and drawn[0]["nodes"] > 0 and drawn[0]["layout"] == "worker", drawn
    assert page.evaluate(STARTED_JS) == started
    widget_opened = [m["at"] for m in page.evaluate("() => window.pvwMessages")
                     if m["type"] == "comm_open" and m["module"] == "AnyModel"][1:]  # fmt: skip
    assert len(widget_opened) == 1 and started["pvw:bundle"][0] < widget_opened[0]
