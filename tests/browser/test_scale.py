"""The widget at scale, in a real JupyterLab: the ~10k-node Llama-like decoder of
benchmarks/models.py (tests/browser/notebooks/scale.ipynb) draws its default view with Graphviz
in a Web Worker, keeps the page responsive while a big layout runs, never hands Graphviz more
than its visible-node budget (and says so), and survives a Graphviz failure. The same notebook
shows ResNet-18, whose default view is the README screenshot.

Expected counts come from tests/fixtures/graphs/layer_tree.py, a reading of the payload in
Python independent of the JS that owns these rules and draws.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from explorer_page import Explorer
from fixtures.graphs.layer_tree import LayerTree
from graph_view import transform_attr, wait_for_new_transform
from lab_page import save_screenshot
from scale_page import (
    budget,
    chain_dot,
    dense_dot,
    element,
    layout_is_running,
    long_tasks_since,
    message,
    node_ids,
    record_clicks,
    record_messages,
    render_dot,
    shown_nodes,
    start_long_tasks,
    wait_for_message,
    wait_for_state,
)

HERE = Path(__file__).resolve().parent
DOCS_SCREENSHOTS = HERE.parents[1] / "docs" / "screenshots"
NOTEBOOK = "scale.ipynb"


def payload_of(explorer: Explorer, widget: str, directory: Path) -> dict[str, Any]:
    """The widget's payload, through a file: printed, it would trip Jupyter's IOPub rate limit."""
    path = directory / f"{widget}.json"
    explorer.run(f"import json; json.dump({widget}.graph, open({str(path)!r}, 'w'))")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def graph(explorer: Explorer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    payload = payload_of(explorer, "w", tmp_path_factory.mktemp("payloads"))
    assert len(payload["nodes"]) > 9000, "scale.ipynb should show the 10k-node model"
    return payload


@pytest.fixture(scope="module")
def tree(graph: dict[str, Any]) -> LayerTree:
    return LayerTree(graph)


@pytest.fixture
def fresh(explorer: Explorer) -> Explorer:
    """The default view (automatic depth), redrawn from the model's state."""
    explorer.set_expanded("w.collapse_all()")
    explorer.set_expanded("w.depth = -1")
    return explorer


def test_default_view_of_10k_nodes(explorer: Explorer, graph: dict[str, Any], tree) -> None:
    expanded = explorer.value("w.expanded")
    assert expanded == tree.to_depth(tree.auto_depth())
    expected = tree.visible_count(expanded)
    assert 0 < expected <= 150
    assert shown_nodes(explorer) == expected
    assert explorer.root.get_attribute("data-visible-nodes") == str(expected)
    status = explorer.root.get_by_test_id("pvw-status").inner_text()
    assert f"{len(graph['nodes'])} GradNodes" in status
    # Laid out in a Web Worker (from the bundle: the page resolves nothing but loopback).
    assert explorer.root.get_attribute("data-layout") == "worker"


def test_page_responsive_while_graphviz_runs(fresh: Explorer) -> None:
    page = fresh.page
    record_clicks(page, "pvw-zoom-in")
    before = transform_attr(page)
    # A layout that keeps Graphviz busy for seconds (a wide, deep DAG), through the renderer.
    render_dot(page, dense_dot(25, 80, 6))
    page.wait_for_function(layout_is_running(), timeout=10_000)
    t0 = page.evaluate("performance.now()")
    fresh.root.get_by_test_id("pvw-zoom-in").click()
    clicks = page.evaluate("window.pvwClicks")
    assert clicks, "the click never reached the toolbar button"
    latency = clicks[0]["t"] - t0
    assert clicks[0]["state"] == "rendering", "the layout should still have been running"
    assert latency < 1000, f"a toolbar click took {latency:.0f} ms during a layout"
    wait_for_new_transform(page, before)  # and it did zoom
    wait_for_state(fresh, "ready", timeout_ms=120_000)


def test_expand_all_goes_level_by_level_within_budget(fresh: Explorer, tree) -> None:
    page = fresh.page
    limit = budget(fresh)
    record_messages(page)
    start_long_tasks(page)
    before = fresh.renders()
    fresh.root.get_by_test_id("pvw-expand-all").click()
    text = wait_for_message(fresh, "Expanded to depth", timeout_ms=120_000)

    counts = [tree.visible_count(tree.to_depth(d)) for d in range(tree.max_level + 2)]
    fits = max(d for d, c in enumerate(counts) if c <= limit)
    assert fits < tree.max_level + 1, "the 10k graph should not fit the budget fully expanded"
    max_depth = tree.max_level + 1
    assert text == (
        f"Expanded to depth {fits} of {max_depth} ({counts[fits]:,} nodes): depth {fits + 1} "
        f"would draw {counts[fits + 1]:,} nodes, over the {limit:,}-node limit of one layout. "
        "Open layer groups one at a time to see more."
    )
    # One redraw per level, each announced while it was laid out.
    shown = page.evaluate("window.pvwMessages")
    start = tree.auto_depth() + 1
    for depth in range(start, fits + 1):
        progress = f"Expand all: opening depth {depth} of {max_depth} ({counts[depth]:,} nodes)"
        assert f"{progress}\u2026" in shown
    assert fresh.renders() >= before + (fits + 1 - start)
    assert fresh.value("w.expanded") == tree.to_depth(fits)
    assert fresh.value("w.depth") == fits
    assert shown_nodes(fresh) == counts[fits] <= limit
    worst = max(long_tasks_since(page), default=0)
    assert worst < 2500, f"the main thread was blocked for {worst:.0f} ms"


def test_requests_over_budget_open_what_fits(fresh: Explorer, graph: dict[str, Any], tree) -> None:
    limit = budget(fresh)
    # From Python: every group. The widget opens what fits and syncs that back.
    fresh.run("w.expand_all()")
    text = wait_for_message(fresh, "stay closed", timeout_ms=120_000)
    wait_for_state(fresh, "ready", timeout_ms=120_000)
    fresh.answered()
    opened = fresh.value("w.expanded")
    count = tree.visible_count(opened)
    assert count <= limit < tree.visible_count(tree.ids)
    assert shown_nodes(fresh) == count
    left = len(tree.ids) - len(opened)
    assert re.fullmatch(
        rf"Showing {count:,} nodes: the requested groups would draw {len(graph['nodes']):,} "
        rf"nodes, over the {limit:,}-node limit of one layout, so {left} of them stay closed\.",
        text,
    ), text

    # A click on a closed group that no longer fits: nothing opens, and the widget says why.
    group = next(
        g
        for g in tree.ids
        if g not in opened
        and tree.parent[g] in opened
        and tree.visible_count([*opened, g]) > limit
        and element(fresh, f"pvw-{g}").count()
    )
    renders = fresh.renders()
    element(fresh, f"pvw-{group}").dispatch_event("click")
    text = wait_for_message(fresh, "Did not open", timeout_ms=10_000)
    assert f"Did not open {tree.names[group]}" in text and "Collapse other groups first." in text
    assert fresh.value("w.expanded") == opened
    assert fresh.renders() == renders


def test_graphviz_failure_keeps_the_widget_usable(fresh: Explorer, tree) -> None:
    page = fresh.page
    drawn = node_ids(fresh)
    # A 30,000-node chain overflows the stack of Graphviz's WASM (ranking recurses per node).
    render_dot(page, chain_dot(30_000))
    wait_for_state(fresh, "error", timeout_ms=120_000)
    text = message(fresh)
    assert text.startswith("Graphviz could not lay out this graph (")
    wasm_failure = r"Maximum call stack size exceeded|memory access out of bounds|abort"
    assert re.search(wasm_failure, text), text
    assert text.endswith("The previous drawing stays.")
    assert node_ids(fresh) == drawn

    # A broken DOT: Graphviz's own error message.
    render_dot(page, "digraph { a -> }")
    wait_for_message(fresh, "syntax error", timeout_ms=30_000)
    assert node_ids(fresh) == drawn

    # Still usable: a click opens a group, laid out by a fresh worker.
    expanded = fresh.value("w.expanded")
    group = next(g for g in tree.ids if g not in expanded and element(fresh, f"pvw-{g}").count())
    fresh.redrawn(lambda: element(fresh, f"pvw-{group}").dispatch_event("click"))
    assert group in fresh.value("w.expanded")
    assert shown_nodes(fresh) == tree.visible_count(fresh.value("w.expanded"))
    assert message(fresh) == ""


def test_resnet18_screenshot(explorer: Explorer, tmp_path: Path) -> None:
    """docs/screenshots/resnet18.png: ResNet-18's default view, for the README."""
    page = explorer.page
    root = page.locator("[data-testid=pvw-root]").nth(1)
    root.wait_for(state="attached")
    page.wait_for_function(
        "(el) => el.dataset.state === 'ready'", arg=root.element_handle(), timeout=60_000
    )
    explorer.answered("w18")
    expanded = explorer.value("w18.expanded")
    tree18 = LayerTree(payload_of(explorer, "w18", tmp_path))
    assert expanded == tree18.to_depth(tree18.auto_depth())
    assert root.locator("svg g.node").count() == tree18.visible_count(expanded)
    root.evaluate("(el) => el.scrollIntoView({ block: 'center' })")
    page.mouse.move(0, 0)
    page.wait_for_timeout(300)
    shot = save_screenshot(root, "resnet18", DOCS_SCREENSHOTS)
    assert shot.stat().st_size > 20_000, "screenshot looks empty"
