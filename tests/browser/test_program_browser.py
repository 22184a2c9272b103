"""A to_static model in a real JupyterLab: its Dy2StGradNode's program group starts closed,
opens on a click into the program's backward ops, grouped by layer, and an edge inside says
why it has no statistics (tests/browser/notebooks/program.ipynb)."""

from __future__ import annotations

from explorer_page import Explorer, hover_edge
from graph_dicts import nested
from lab_page import save_screenshot

NOTEBOOK = "program.ipynb"


def test_the_program_node_opens_into_its_ops(explorer: Explorer) -> None:
    graph = nested(explorer.value("w.graph"))
    (program,) = [g for g in graph["groups"] if g["type"] == "to_static program"]
    pid = program["id"]
    ops = [n for n in graph["nodes"] if n["kind"] == "program_op"]
    assert ops
    explorer.set_expanded("w.expand_all()")
    explorer.set_expanded(f"w.collapse({pid!r})")
    shown = explorer.node_ids()
    assert f"pvw-{pid}" in shown and not any(f"pvw-{n['id']}" in shown for n in ops)
    node = explorer.element(f"pvw-{pid}")
    assert "to_static program" in (node.text_content() or "")
    save_screenshot(explorer.root, "program_closed")

    before = explorer.renders()
    node.click()
    explorer.wait_ready(after=before)
    shown = explorer.node_ids()
    assert all(f"pvw-{n['id']}" in shown for n in ops)
    assert explorer.element(f"pvw-{pid}-cluster").count() == 1
    layer_clusters = [g["id"] for g in graph["groups"] if g.get("parent") == pid]
    assert layer_clusters and all(
        explorer.element(f"pvw-{g}-cluster").count() == 1 for g in layer_clusters
    )
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")  # the clicked group is selected
    text = inspector.inner_text()
    assert f"{len(ops)}, run as one GradNode" in text
    explorer.page.get_by_test_id("pvw-fit").click()
    explorer.page.wait_for_timeout(600)
    save_screenshot(explorer.root, "program_open")
    status = explorer.page.get_by_test_id("pvw-status").inner_text()
    assert f"+ {len(ops)} program ops" in status

    # An edge between two ops of the program: its shape, and why there are no statistics.
    inner = next(
        e for e in graph["edges"]
        if e["source"].startswith(f"{pid}_") and e["target"].startswith(f"{pid}_")
    )  # fmt: skip
    hover_edge(explorer, f"pvw-{inner['id']}")
    tip = explorer.page.get_by_test_id("pvw-tooltip").inner_text()
    assert "inside a compiled program" in tip
    assert f"shape {inner['grad']['shape']}" in tip
