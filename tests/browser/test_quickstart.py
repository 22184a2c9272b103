"""notebooks/quickstart.ipynb, run in a real JupyterLab: the traced graph is drawn, complete
and interactive (wheel zoom, drag pan, Fit); the seed's flow below it still has layer groups."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from graph_view import (
    GRAPH,
    SVG_NODES,
    background_point,
    screen_box,
    transform_attr,
    wait_for_new_transform,
    zoom_transform,
)
from lab_page import open_and_run_notebook, save_screenshot
from notebook_exec import displayed_values
from playwright.sync_api import Locator, Page

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "quickstart.ipynb"
DOCS_SCREENSHOTS = REPO / "docs" / "screenshots"


@pytest.fixture(scope="module")
def notebook_graphs() -> list[dict]:
    """The graphs the notebook's widgets hold, computed here from the notebook's own code:
    build_graph's JSON, exactly what the front end receives."""
    from paddleviz_widget import GraphWidget

    widgets = [
        v for v in displayed_values(REPO / "notebooks" / NOTEBOOK) if isinstance(v, GraphWidget)
    ]
    assert len(widgets) == 2, f"{NOTEBOOK} should display two GraphWidgets (traced, seed flow)"
    return [w.graph for w in widgets]


@pytest.fixture(scope="module")
def expected_graph(notebook_graphs: list[dict]) -> dict:
    """The first widget's graph: the traced one."""
    graph = notebook_graphs[0]
    assert len(graph["nodes"]) > 20, "the quickstart model should give a graph worth exploring"
    assert "layers" in graph["meta"]["annotations"] and "notice" not in graph["meta"]
    return graph


def test_the_seed_flow_section_still_has_layer_groups(notebook_graphs) -> None:
    traced, seed = notebook_graphs
    assert "layers-inferred" in seed["meta"]["annotations"] and seed["meta"].get("notice")
    assert len(seed["nodes"]) == len(traced["nodes"])
    assert all("group" in n for n in seed["nodes"])


@pytest.fixture(scope="module")
def quickstart(chromium_browser, lab_server) -> Iterator[tuple[Page, Locator]]:
    """The notebook opened and run once (its own browser context, as conftest's `page`), for
    both tests below: the drawing's checks first, then zoom, pan and Fit on it."""
    context = chromium_browser.new_context(
        viewport={"width": 1400, "height": 1000}, device_scale_factor=2
    )
    page = context.new_page()
    page.pvw_console_errors = []  # type: ignore[attr-defined]  # read by lab_page.page_problems
    page.on(
        "console",
        lambda msg: page.pvw_console_errors.append(msg.text) if msg.type == "error" else None,
    )
    page.on("pageerror", lambda exc: page.pvw_console_errors.append(f"uncaught: {exc}"))
    try:
        yield page, open_and_run_notebook(page, lab_server, NOTEBOOK)
    finally:
        context.close()
        lab_server.shutdown_sessions()


def test_quickstart_draws_every_node(quickstart, expected_graph) -> None:
    page, roots = quickstart
    assert roots.count() == 2
    assert page.locator(GRAPH).count() == 2

    root = roots.first  # the traced graph
    expected_ids = [f"pvw-{node['id']}" for node in expected_graph["nodes"]]
    # The page may draw twice (its first view, then the depth it works out): wait for the
    # drawing that holds every node, rather than reading whichever is there first.
    root.evaluate(
        """(el, ids) => new Promise((resolve, reject) => {
          const done = () => {
            const drawn = new Set([...el.querySelectorAll("svg g.node")].map((n) => n.id));
            return ids.every((id) => drawn.has(id)) && drawn.size === ids.length;
          };
          const started = performance.now();
          const poll = () => done() ? resolve(true)
            : performance.now() - started > 30000 ? reject(new Error("not every node drawn"))
            : setTimeout(poll, 100);
          poll();
        })""",
        expected_ids,
    )
    svg_ids = root.locator(SVG_NODES).evaluate_all("(nodes) => nodes.map((n) => n.id)")
    assert len(svg_ids) == len(expected_graph["nodes"])
    assert set(svg_ids) == set(expected_ids)

    # The status bar is written once the drawing is done (its animation included): wait for it.
    status = root.locator("[data-testid=pvw-status]")
    status.filter(has_text=f"showing {len(expected_ids)} nodes").wait_for(timeout=30_000)
    assert f"{len(expected_ids)} nodes" in status.inner_text()

    # The README shows this picture: keep it in sync with what the widget really draws.
    root.evaluate("(el) => el.scrollIntoView({ block: 'center' })")
    shot = save_screenshot(root, "quickstart", DOCS_SCREENSHOTS)
    assert shot.stat().st_size > 10_000, "screenshot looks empty"


def test_quickstart_zoom_pan_fit(quickstart) -> None:
    page, roots = quickstart
    root = roots.first
    # The notebook shows a second widget below: let the page settle after the first is drawn,
    # so that the second one's arrival cannot move the first while it is dragged. (Lab may not
    # put an off-screen cell's output in the page at all, so its arrival cannot be waited for.)
    page.wait_for_function(
        """() => document.querySelector("[data-testid=pvw-root]")?.dataset.state === "ready" """,
        timeout=60_000,
    )
    page.wait_for_timeout(1500)
    root.evaluate("(el) => el.scrollIntoView({ block: 'center' })")
    graph = root.locator(GRAPH)
    node = root.locator(SVG_NODES).first
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

    # Fit: the whole drawing, centred (the first view may be a readable part of it instead:
    # tests/browser/test_first_view_browser.py).
    root.get_by_role("button", name="Fit graph to view").click()
    page.wait_for_timeout(600)  # Fit animates
    area = screen_box(graph)
    drawing = screen_box(root.locator(f"{GRAPH} svg > g"))
    assert drawing["x"] >= area["x"] - 1 and drawing["y"] >= area["y"] - 1
    assert drawing["x"] + drawing["width"] <= area["x"] + area["width"] + 1
    assert drawing["y"] + drawing["height"] <= area["y"] + area["height"] + 1
    centre = (drawing["x"] + drawing["width"] / 2, drawing["y"] + drawing["height"] / 2)
    assert centre == pytest.approx(
        (area["x"] + area["width"] / 2, area["y"] + area["height"] / 2), abs=2
    )
