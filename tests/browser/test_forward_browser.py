"""The forward reading in a real JupyterLab: LeNet opened with ``GraphWidget(y, view="forward")``
(tests/browser/notebooks/forward.ipynb), then switched with the toolbar's Backward / Forward
toggle. The drawn SVG is checked against the payload (``w.graph``, read from the kernel) and the
hand-written table of forward op names (tests/fixtures/forward_op_names.json): labels, the end of
each arrow its arrowhead sits at, the output's place, and that selection and open groups stay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from explorer_page import GRAPH, Explorer, hover_edge
from lab_page import save_screenshot

NOTEBOOK = "forward.ipynb"
TABLE = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "forward_op_names.json").read_text(
        encoding="utf-8"
    )
)["names"]

# How far (px) the arrowhead of edge `id` is from the boxes of its two drawn ends.
ARROWHEAD_JS = """([edge, a, b]) => {
  const head = document.getElementById(edge).querySelector("polygon").getBoundingClientRect();
  const [x, y] = [head.x + head.width / 2, head.y + head.height / 2];
  const gap = (id) => {
    const r = document.getElementById(id).getBoundingClientRect();
    return Math.hypot(Math.max(r.left - x, 0, x - r.right), Math.max(r.top - y, 0, y - r.bottom));
  };
  return [gap(a), gap(b)];
}"""

# The first line of each drawn node's label, and the vertical centre of each node on screen.
LABELS_JS = """(sel) => Object.fromEntries([...document.querySelectorAll(sel)].map(
  (g) => [g.id, g.querySelector("text").textContent]))"""
CENTRES_JS = """(sel) => Object.fromEntries([...document.querySelectorAll(sel)].map((g) => {
  const r = g.getBoundingClientRect();
  return [g.id, r.y + r.height / 2];
}))"""
NODES = f"{GRAPH} svg g.node"


@pytest.fixture
def fresh(explorer: Explorer) -> Explorer:
    """Every group open, nothing selected, and the graph read forward, as the notebook opened it."""
    explorer.reset()
    if explorer.value("w.view") != "forward":
        explorer.redrawn(lambda: explorer.run("w.view = 'forward'"))
    return explorer


def pressed(explorer: Explorer) -> str:
    buttons = {r: explorer.page.get_by_test_id(f"pvw-reading-{r}") for r in ("backward", "forward")}
    down = [r for r, b in buttons.items() if b.get_attribute("aria-pressed") == "true"]
    assert len(down) == 1, down
    return down[0]


def switch(explorer: Explorer, reading: str) -> None:
    """Click the toolbar's toggle and wait for the redraw and for the kernel's trait."""
    explorer.redrawn(lambda: explorer.page.get_by_test_id(f"pvw-reading-{reading}").click())
    for _ in range(100):
        if explorer.value("w.view") == reading:
            return
        explorer.page.wait_for_timeout(50)
    raise AssertionError(f"w.view never became {reading!r}")


def param_edges(graph: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(edge, op, parameter) for each gradient an op sends to a parameter."""
    kinds = {n["id"]: n["kind"] for n in graph["nodes"]}
    return [
        (e["id"], e["source"], e["target"])
        for e in graph["edges"]
        if kinds[e["target"]] == "param" and kinds[e["source"]] != "param"
    ]


def arrowhead_gaps(explorer: Explorer, edge: str, op: str, param: str) -> tuple[float, float]:
    to_op, to_param = explorer.page.evaluate(
        ARROWHEAD_JS, [f"pvw-{edge}", f"pvw-{op}", f"pvw-{param}"]
    )
    return to_op, to_param


def check_forward_drawing(explorer: Explorer, graph: dict[str, Any]) -> None:
    labels = explorer.page.evaluate(LABELS_JS, NODES)
    for node in graph["nodes"]:
        expected = node["param"]["name"] if node["kind"] == "param" else TABLE[node["name"]]
        assert labels[f"pvw-{node['id']}"] == expected
    assert {"matmul", "conv2d", "pool2d", "sigmoid"} <= set(labels.values())
    edges = param_edges(graph)
    assert len(edges) == sum(n["kind"] == "param" for n in graph["nodes"])
    for edge, op, param in edges:  # a parameter's arrow points into the op that uses it
        to_op, to_param = arrowhead_gaps(explorer, edge, op, param)
        assert to_op < min(to_param, 12), (edge, to_op, to_param)
    centres = explorer.page.evaluate(CENTRES_JS, NODES)
    output = next(n["id"] for n in graph["nodes"] if n["kind"] == "output")
    assert centres[f"pvw-{output}"] >= max(centres.values()) - 1  # the output is drawn last


@pytest.mark.usefixtures("fresh")
def test_opens_in_the_forward_reading(explorer: Explorer, graph: dict[str, Any]) -> None:
    assert explorer.value("w.view") == "forward"
    assert pressed(explorer) == "forward"
    check_forward_drawing(explorer, graph)
    # Edge tooltips name the ends as drawn, and what flows is a tensor.
    edge, op, param = param_edges(graph)[0]
    weight = next(n for n in graph["nodes"] if n["id"] == param)["param"]["name"]
    op_name = TABLE[next(n for n in graph["nodes"] if n["id"] == op)["name"]]
    hover_edge(explorer, f"pvw-{edge}")
    tooltip = explorer.page.get_by_test_id("pvw-tooltip").inner_text()
    assert tooltip.splitlines()[0] == f"{weight} \u2192 {op_name}"
    explorer.page.mouse.move(0, 0)
    save_screenshot(explorer.root, "forward_lenet")


@pytest.mark.usefixtures("fresh")
def test_the_toolbar_toggles_the_reading_and_the_trait_follows(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    legend = explorer.page.get_by_test_id("pvw-legend")
    assert "forward op" in legend.inner_text() and "backward op" not in legend.inner_text()
    switch(explorer, "backward")
    assert pressed(explorer) == "backward"
    assert "backward op" in legend.inner_text() and "forward op" not in legend.inner_text()
    labels = explorer.page.evaluate(LABELS_JS, NODES)
    matmuls = [n["id"] for n in graph["nodes"] if n["name"] == "MatmulGradNode"]
    assert {labels[f"pvw-{i}"] for i in matmuls} == {"Matmul"}
    for edge, op, param in param_edges(graph):  # read backward: gradients flow into parameters
        to_op, to_param = arrowhead_gaps(explorer, edge, op, param)
        assert to_param < min(to_op, 12), (edge, to_op, to_param)
    switch(explorer, "forward")
    check_forward_drawing(explorer, graph)


@pytest.mark.usefixtures("fresh")
def test_the_kernel_sets_the_reading(explorer: Explorer, graph: dict[str, Any]) -> None:
    explorer.redrawn(lambda: explorer.run("w.view = 'backward'"))
    assert pressed(explorer) == "backward"
    explorer.redrawn(lambda: explorer.run("w.view = 'forward'"))
    assert pressed(explorer) == "forward"
    check_forward_drawing(explorer, graph)
    # A value the widget refuses leaves the kernel's trait and the page as they were.
    refused = explorer.run(
        "try:\n    w.view = 'sideways'\nexcept ValueError as exc:\n    print(type(exc).__name__)"
    )
    assert refused.strip() == "ViewError"
    assert pressed(explorer) == "forward"
    assert explorer.value("w.view") == "forward"


@pytest.mark.usefixtures("fresh")
def test_selection_and_open_groups_survive_the_toggle(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    explorer.set_expanded("w.collapse('conv')")
    expanded = explorer.value("w.expanded")
    before = explorer.node_ids()
    matmul = next(n["id"] for n in graph["nodes"] if n["name"] == "MatmulGradNode")
    explorer.element(f"pvw-{matmul}").click()
    assert explorer.value("w.selected") == matmul
    explorer.page.get_by_test_id("pvw-inspector").wait_for(state="visible")
    for reading in ("backward", "forward"):
        switch(explorer, reading)
        assert explorer.value("w.selected") == matmul
        assert explorer.value("w.expanded") == expanded
        assert explorer.node_ids() == before
        selected = explorer.page.locator(f"{GRAPH} svg .pvw-selected")
        assert selected.evaluate_all("(els) => els.map((e) => e.id)") == [f"pvw-{matmul}"]
        title = "MatmulGradNode" if reading == "backward" else "matmul"
        assert explorer.page.get_by_test_id("pvw-inspector-title").inner_text() == title
    # Search still highlights what it finds in the drawing read forward.
    box = explorer.page.get_by_test_id("pvw-search")
    box.fill("matmul")
    matches = explorer.page.locator(f"{GRAPH} svg .pvw-match")
    shown = sorted(matches.evaluate_all("(els) => els.map((e) => e.id)"))
    assert shown == sorted(
        f"pvw-{n['id']}" for n in graph["nodes"] if n["name"] == "MatmulGradNode"
    )
    box.fill("")
