"""A cell's start-up (issue 22, item 1), in JupyterLab: ``GraphWidget(y)`` opens its comm before
it builds the graph, so the page loads the front end (bundle, Graphviz WASM, layout worker)
while the kernel builds; the graph follows in an update, before the display. One layout worker
and one WASM compile serve every widget of the page, and so does one import of the explorer's
bundle (js/widget_loader.ts), though anywidget imports each widget's `_esm` afresh. Messages
are read as the page receives them (the kernel connection's ``anyMessage``), the start-up from
the page's performance marks (js/layout/shared.ts)."""

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
    if (direction !== "recv" || !["comm_open", "comm_msg", "display_data"].includes(type)) return;
    const data = msg.content.data || {};
    const paths = (data.buffer_paths || []).map((p) => p.join("."));
    const sizes = (msg.buffers || []).map((b) => b.byteLength);
    const at = paths.indexOf("graph");
    const view = data["application/vnd.jupyter.widget-view+json"];
    window.pvwMessages.push({
      type, comm: msg.content.comm_id || (view && view.model_id) || null,
      module: (data.state || {})._model_name || null,
      graphBytes: at >= 0 ? sizes[at] : null,
    });
  });
}"""
RUN_ALL_JS = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.ready;
  return await window.jupyterapp.commands.execute("notebook:run-all-cells");
}"""
MARKS_JS = """() => Object.fromEntries(["pvw:bundle", "pvw:worker-start", "pvw:wasm-compile"]
  .map((name) => [name, performance.getEntriesByName(name).length]))"""
DRAWN_JS = """() => [...document.querySelectorAll("[data-testid=pvw-root]")].map((r) => ({
  state: r.dataset.state, layout: r.dataset.layout, renders: r.dataset.renders,
  nodes: r.querySelectorAll("[data-testid=pvw-graph] svg g.node").length }))"""


def test_the_page_loads_while_the_kernel_builds_and_one_worker_serves_every_widget(
    page, lab_server
):
    shutil.copy(NOTEBOOKS / NOTEBOOK, lab_server.root / NOTEBOOK)
    page.goto(lab_server.url(lab_server.notebook_path(NOTEBOOK)))
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel); }",
        timeout=120_000,
    )
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

    # Each widget: its comm opens without the graph, the graph follows in an update, and
    # only then is the widget displayed.
    messages = page.evaluate("() => window.pvwMessages")
    opened = [m for m in messages if m["type"] == "comm_open" and m["module"] == "AnyModel"]
    assert len(opened) == 2, messages
    for comm in (m["comm"] for m in opened):
        mine = [m for m in messages if m["comm"] == comm]
        kinds = [m["type"] for m in mine]
        assert kinds[0] == "comm_open" and "display_data" in kinds, mine
        shown = kinds.index("display_data")
        assert mine[0]["graphBytes"] == len(b"{}"), mine[0]  # opened before the graph is built
        updates = [m["graphBytes"] or 0 for m in mine[1:shown] if m["type"] == "comm_msg"]
        assert any(size > 5_000 for size in updates), mine  # LeNet's (~8 kB), before display

    # The bundle was evaluated, the worker started and Graphviz compiled, each once.
    marks = page.evaluate(MARKS_JS)
    assert marks == {"pvw:bundle": 1, "pvw:worker-start": 1, "pvw:wasm-compile": 1}, marks
