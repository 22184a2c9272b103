"""problems() findings in a real JupyterLab (tests/browser/notebooks/problems.ipynb: a model
whose `block` layer makes a NaN in the forward with `log`): the culprit op and its layer carry
the badge, the overview lists the finding under Problems, and "Jump to first NaN/Inf" goes
to the op problems() names, not to the loss's GradNode where the backward first met it."""

from __future__ import annotations

from typing import Any

from explorer_page import GRAPH, Explorer
from lab_page import save_screenshot

NOTEBOOK = "problems.ipynb"


def _culprit(graph: dict[str, Any]) -> dict[str, Any]:
    (found,) = [p for p in graph["meta"]["problems"] if p["severity"] == "problem"]
    return found


def test_the_culprit_and_its_layer_carry_the_badge(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    p = _culprit(graph)
    assert (p["kind"], p["layer"], p["name"]) == ("nonfinite", "block", "LogGradNode")
    explorer.set_expanded("w.collapse_all()")
    explorer.set_expanded("w.expand('Tower')")  # the model open, its layers collapsed
    layer = explorer.page.locator(f"{GRAPH} svg g.node.pvw-problem")
    assert layer.count() == 1
    text = layer.text_content() or ""
    assert "block" in text and "NaN/Inf made here" in text
    explorer.set_expanded("w.expand_all()")
    node = explorer.element(f"pvw-{p['node']}")
    assert "pvw-problem" in (node.get_attribute("class") or "")
    assert "\u26a0 NaN/Inf made here" in (node.text_content() or "")
    stroke = node.locator("path, polygon").first.evaluate("(e) => getComputedStyle(e).stroke")
    assert stroke == "rgb(214, 39, 40)"


def test_the_overview_lists_the_finding_and_the_jump_goes_to_it(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    p = _culprit(graph)
    assert graph["meta"]["first_nonfinite"] != p["node"]  # the backward met it at the loss
    explorer.run("w.selected = ''")
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    text = inspector.inner_text()
    assert "problems" in text.lower() and "block / LogGradNode" in text
    explorer.set_expanded("w.collapse_all()")
    before = explorer.renders()
    explorer.page.get_by_test_id("pvw-jump-nonfinite").click()
    explorer.wait_ready(after=before)  # its layer opens
    assert explorer.value("w.selected") == p["node"]
    text = inspector.inner_text()
    assert "problem" in text.lower() and "the only one of its" in text
    save_screenshot(explorer.page, "problems-jump")
