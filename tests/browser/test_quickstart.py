"""notebooks/quickstart.ipynb, run in a real JupyterLab: the graph is drawn, complete and
interactive (wheel zoom, drag pan, Fit)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from graph_view import (
    GRAPH,
    SVG_NODES,
    background_point,
    screen_box,
    transform_attr,
    wait_for_new_transform,
    wait_for_transform_near,
    zoom_transform,
)
from lab_page import open_and_run_notebook, save_screenshot
from notebook_exec import displayed_values

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "quickstart.ipynb"
DOCS_SCREENSHOTS = REPO / "docs" / "screenshots"


@pytest.fixture(scope="module")
def expected_graph() -> dict:
    """The graph the notebook's widget holds, computed here from the notebook's own code."""
    from paddleviz_widget import GraphWidget

    widgets = [
        v for v in displayed_values(REPO / "notebooks" / NOTEBOOK) if isinstance(v, GraphWidget)
    ]
    assert len(widgets) == 1, f"{NOTEBOOK} should display exactly one GraphWidget"
    graph = widgets[0].graph  # build_graph's JSON, exactly what the front end receives
    assert len(graph["nodes"]) > 20, "the quickstart model should give a graph worth exploring"
    return graph


def test_quickstart_draws_every_node(page, lab_server, expected_graph) -> None:
    roots = open_and_run_notebook(page, lab_server, NOTEBOOK)
    assert roots.count() == 1
    assert page.locator(GRAPH).count() == 1

    svg_ids = page.locator(SVG_NODES).evaluate_all("(nodes) => nodes.map((n) => n.id)")
    expected_ids = [f"pvw-{node['id']}" for node in expected_graph["nodes"]]
    assert len(svg_ids) == len(expected_graph["nodes"])
    assert set(svg_ids) == set(expected_ids)

    root = roots.first
    status = root.locator("[data-testid=pvw-status]").inner_text()
    assert f"{len(expected_ids)} nodes" in status

    # The README shows this picture: keep it in sync with what the widget really draws.
    root.evaluate("(el) => el.scrollIntoView({ block: 'center' })")
    shot = save_screenshot(root, "quickstart", DOCS_SCREENSHOTS)
    assert shot.stat().st_size > 10_000, "screenshot looks empty"


def test_quickstart_zoom_pan_fit(page, lab_server) -> None:
    root = open_and_run_notebook(page, lab_server, NOTEBOOK).first
    root.evaluate("(el) => el.scrollIntoView({ block: 'center' })")
    graph = page.locator(GRAPH)
    node = page.locator(SVG_NODES).first
    initial = zoom_transform(page)

    # Zoom: a wheel over the graph scales it, about the pointer.
    before_box = screen_box(node)
    page.mouse.move(*background_point(graph))
    before = transform_attr(page)
    page.mouse.wheel(0, -300)
    zoomed = wait_for_new_transform(page, before)
    assert zoomed.k > initial.k * 1.1, f"wheel up should zoom in: {initial} -> {zoomed}"
    growth = screen_box(node)["width"] / before_box["width"]
    assert math.isclose(growth, zoomed.k / initial.k, rel_tol=0.05)

    # Pan: dragging the background moves the drawing by the drag distance, at the same scale.
    dx, dy = 120, 80
    x, y = background_point(graph)
    before_box = screen_box(node)
    before = transform_attr(page)
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y + dy, steps=8)
    page.mouse.up()
    panned = wait_for_new_transform(page, before)
    assert math.isclose(panned.k, zoomed.k, rel_tol=1e-6), "a drag must not zoom"
    assert (panned.x, panned.y) != (zoomed.x, zoomed.y)
    after_box = screen_box(node)
    assert after_box["x"] - before_box["x"] == pytest.approx(dx, abs=2)
    assert after_box["y"] - before_box["y"] == pytest.approx(dy, abs=2)

    # Fit: back to the initial, whole-graph view.
    root.get_by_role("button", name="Fit graph to view").click()
    fitted = wait_for_transform_near(page, initial)
    assert fitted.close_to(initial), f"Fit should restore {initial}, got {fitted}"
