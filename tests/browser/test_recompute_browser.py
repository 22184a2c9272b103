"""Recompute in a real JupyterLab: the notice line says what recompute hides, and clicking a
RecomputeFunction node lists the decoder layer it recomputes and the parameters it hides
(paddleformers' Llama, tests/browser/notebooks/recompute.ipynb)."""

from __future__ import annotations

from explorer_page import Explorer
from graph_dicts import nested

NOTEBOOK = "recompute.ipynb"


def test_the_recompute_node_lists_what_it_hides(explorer: Explorer) -> None:
    graph = nested(explorer.value("w.graph"))
    entry = next(p for p in graph["meta"]["pylayers"] if p.get("layer") == "model.layers.0")
    # The model's own account of that layer's parameters, read in the kernel.
    names = explorer.value(
        "sorted('model.layers.0.' + n for n, p in model.model.layers[0].named_parameters()"
        " if not p.stop_gradient)"
    )
    notice = explorer.page.get_by_test_id("pvw-notice").inner_text()
    assert "Recompute hides the GradNodes of 2 layer(s)" in notice
    assert "PyLayer" in notice  # and, on its own line, why shapes were not replayed

    explorer.set_expanded("w.expand('model.layers.0')")
    # All of it in view: the first view is a readable part on the output, far from layers.0.
    explorer.page.get_by_test_id("pvw-fit").click()
    explorer.page.wait_for_timeout(600)
    node = explorer.element(f"pvw-{entry['node']}")
    node.hover()
    tooltip = explorer.page.get_by_test_id("pvw-tooltip").inner_text()
    assert f"recomputes model.layers.0, hiding {len(names)} parameters" in tooltip
    node.click()
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    text = inspector.inner_text()
    assert "model.layers.0 \u00b7 LlamaDecoderLayer" in text
    assert f"hidden parameters ({len(names)})" in text.lower()  # section titles: CSS capitals
    for name in names:
        assert name in text
