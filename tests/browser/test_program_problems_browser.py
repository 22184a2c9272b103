"""problems() inside a to_static model in a real JupyterLab
(tests/browser/notebooks/program_problems.ipynb: an MLP under to_static(full_graph=True) whose
`block` layer makes a NaN with `log`): "Jump to first NaN/Inf" opens the program node and
selects the program's `log_grad` in that layer, and the inspector says how it was found."""

from __future__ import annotations

from typing import Any

from explorer_page import Explorer
from lab_page import save_screenshot

NOTEBOOK = "program_problems.ipynb"


def test_the_jump_opens_the_program_at_the_op_that_made_the_nan(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    (p,) = [p for p in graph["meta"]["problems"] if p["severity"] == "problem"
            and p["kind"] == "nonfinite"]  # fmt: skip
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert (p["layer"], p["name"]) == ("block", "log")
    assert nodes[p["node"]]["kind"] == "program_op" and nodes[p["node"]]["name"] == "log_grad"
    explorer.run("w.selected = ''")
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    assert "block / log" in inspector.inner_text()
    explorer.set_expanded("w.collapse_all()")
    assert f"pvw-{p['node']}" not in explorer.node_ids()  # inside the closed program
    before = explorer.renders()
    explorer.page.get_by_test_id("pvw-jump-nonfinite").click()
    explorer.wait_ready(after=before)  # the program and its layers open
    assert explorer.value("w.selected") == p["node"]
    assert f"pvw-{p['node']}" in explorer.node_ids()
    node = explorer.element(f"pvw-{p['node']}")
    assert "\u26a0 NaN/Inf made here" in (node.text_content() or "")
    text = inspector.inner_text()
    assert "found by re-running" in text
    save_screenshot(explorer.page, "program-problems-jump")
