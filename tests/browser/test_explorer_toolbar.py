"""The explorer's controls around the graph in a real JupyterLab: the toolbar (depth, collapse
and expand all, edge labels, direction), search (by name and by layer type), light and dark
themes, and the screenshots in docs/, on LeNet (tests/browser/notebooks/explorer.ipynb; the
graph view itself and the Python <-> browser traits: test_explorer.py).

Expected values come from the widget's own payload (``w.graph``, read from the kernel), never
from constants.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from explorer_page import CENTRE_OFFSET_JS, GRAPH, ROOT, TIMEOUT_MS, Explorer
from fixtures.graphs.payload import shape_text, to_depth, visible_nodes
from lab_page import save_screenshot
from playwright.sync_api import expect

NOTEBOOK = "explorer.ipynb"
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture
def fresh(explorer: Explorer) -> Explorer:
    """Every group open, nothing selected, no search: the state each test starts from."""
    explorer.reset()
    return explorer


def test_toolbar(fresh: Explorer, graph: dict[str, Any]) -> None:
    tool = fresh.page.get_by_test_id("pvw-toolbar").get_by_test_id
    fresh.redrawn(tool("pvw-collapse-all").click)
    assert fresh.value("w.expanded") == to_depth(graph, 0)
    assert len(fresh.node_ids()) == len(visible_nodes(graph, set(to_depth(graph, 0))))
    fresh.redrawn(lambda: tool("pvw-depth").select_option("1"))
    assert fresh.value("[w.depth, w.expanded]") == [1, to_depth(graph, 1)]
    fresh.redrawn(tool("pvw-expand-all").click)
    assert len(fresh.node_ids()) == len(graph["nodes"])

    # Edge labels show every gradient shape on the edges.
    fresh.redrawn(tool("pvw-edge-labels").check)
    labels = fresh.page.locator(f"{GRAPH} svg g.edge text").all_text_contents()
    assert len(labels) == len(graph["edges"])
    for edge in graph["edges"]:
        assert any(shape_text(edge["grad"]["shape"]) in t for t in labels)

    # Direction: LeNet's chain is tall top-bottom and wide left-right.
    def aspect() -> float:
        box = fresh.page.locator(f"{GRAPH} svg > g").bounding_box()
        assert box is not None
        return box["width"] / box["height"]

    tall = aspect()
    fresh.redrawn(lambda: tool("pvw-direction").select_option("LR"))
    assert aspect() > tall
    fresh.redrawn(lambda: tool("pvw-direction").select_option("TB"))
    fresh.redrawn(tool("pvw-edge-labels").uncheck)


def test_search_highlights_and_centres(fresh: Explorer, graph: dict[str, Any]) -> None:
    query = "weight"
    expected = [n["id"] for n in graph["nodes"] if query in (n["param"] or {}).get("name", "")]
    expected += [g["id"] for g in graph["groups"] if query in g["name"]]
    assert len(expected) > 1
    # Zoom in first, so that centring has to move the view.
    fresh.page.get_by_test_id("pvw-zoom-in").click()
    fresh.page.get_by_test_id("pvw-zoom-in").click()
    box = fresh.page.get_by_test_id("pvw-search")
    box.fill(query)
    matches = fresh.page.locator(f"{GRAPH} svg .pvw-match")
    assert sorted(matches.evaluate_all("(els) => els.map((e) => e.id)")) == sorted(
        f"pvw-{i}" for i in expected
    )
    box.press("Enter")  # the first selects the first match (test_enter_selects_...); then on
    seen = []
    for _ in range(len(expected)):
        current = fresh.page.locator(f"{GRAPH} svg .pvw-match-current")
        assert current.count() == 1
        dom_id = current.get_attribute("id")
        fresh.page.wait_for_timeout(400)  # the centring pans smoothly
        offset = fresh.page.evaluate(CENTRE_OFFSET_JS, [GRAPH, dom_id])
        assert offset < 30, f"{dom_id} is {offset:.0f}px from the centre"
        seen.append(dom_id)
        box.press("Enter")
    assert sorted(seen) == sorted(f"pvw-{i}" for i in expected)
    assert fresh.page.get_by_test_id("pvw-search-count").inner_text() == f"1/{len(expected)}"
    fresh.page.get_by_test_id("pvw-fit").click()


def test_enter_selects_the_search_match(fresh: Explorer, graph: dict[str, Any]) -> None:
    """A keyboard user selects a match: Enter selects the current one, as a click on it does
    (w.selected, the inspector), then the next one; Shift+Enter the previous one. Before,
    Enter only stepped: the inspector never showed a match reached by keys."""
    page = fresh.page
    linear = [g for g in graph["groups"] if g["type"] == "Linear"]
    names = {g["id"]: g["name"] for g in linear}
    box = page.get_by_test_id("pvw-search")
    box.fill("Linear")
    count = page.get_by_test_id("pvw-search-count")
    expect(count).to_have_text(f"1/{len(linear)}", timeout=5000)
    current = page.locator(f"{GRAPH} svg .pvw-match-current")
    box.press("Shift")  # a key press the front end may lose after load

    def selected_is_current(position: int) -> str:
        expect(count).to_have_text(f"{position}/{len(linear)}", timeout=5000)
        dom_id = current.get_attribute("id") or ""
        group = dom_id.removeprefix("pvw-").removesuffix("-cluster")  # every layer is open
        assert group in names, dom_id
        assert fresh.value_becomes("w.selected", group) == group  # as a click on the cluster
        expect(page.get_by_test_id("pvw-inspector-title")).to_contain_text(names[group])
        return group

    box.press("Enter")
    first = selected_is_current(1)
    box.press("Enter")
    second = selected_is_current(2)
    assert second != first
    box.press("Shift+Enter")
    assert selected_is_current(1) == first
    box.press("Escape")
    expect(count).to_have_text("")
    fresh.run("w.selected = ''")


def test_search_finds_layers_by_type(fresh: Explorer, graph: dict[str, Any]) -> None:
    """A user types a layer class ("Linear") and expects every layer of it, not only paths
    holding the word (LeNet's are "fc.0", "fc.1", "fc.2": nothing matched)."""
    linear = [g["id"] for g in graph["groups"] if g["type"] == "Linear"]
    assert len(linear) == 3 and not any("linear" in g["name"].lower() for g in graph["groups"])
    fresh.page.get_by_test_id("pvw-search").fill("Linear")
    matches = fresh.page.locator(f"{GRAPH} svg .pvw-match")
    expect(matches).to_have_count(len(linear), timeout=5000)
    # Every group is open: each Linear layer is its cluster.
    assert sorted(matches.evaluate_all("(els) => els.map((e) => e.id)")) == sorted(
        f"pvw-{g}-cluster" for g in linear
    )
    assert fresh.page.get_by_test_id("pvw-search-count").inner_text() == f"1/{len(linear)}"
    fresh.page.get_by_test_id("pvw-search").fill("")


def test_follows_light_and_dark_themes(fresh: Explorer, graph: dict[str, Any]) -> None:
    # Open just the group holding the output: outputs, ops, params and collapsed groups show.
    output = next(n for n in graph["nodes"] if n["kind"] == "output")
    fresh.set_expanded(f"w.collapse_all(); w.expand({output['group']!r})")
    try:
        seen = {
            theme: fresh.contrast_in_theme(theme)
            for theme in ("JupyterLab Dark", "JupyterLab Light")
        }
    finally:
        fresh.set_theme("JupyterLab Light")
    dark, light = seen["JupyterLab Dark"], seen["JupyterLab Light"]
    assert dark["background"] < 0.1 < 0.8 < light["background"], seen
    for contrast in (dark, light):
        kinds = {k for k in contrast if k != "background"}
        assert {"pvw-op", "pvw-param", "pvw-output", "pvw-group"} <= kinds, contrast
        for kind in kinds:
            assert contrast[kind] >= 4.5, f"{kind} label is hard to read: {seen}"


def test_screenshots(fresh: Explorer) -> None:
    fresh.run("w.height = '820px'")
    fresh.page.wait_for_function(
        "(sel) => document.querySelector(sel).getBoundingClientRect().height > 800",
        arg=ROOT,
        timeout=TIMEOUT_MS,
    )
    fresh.root.evaluate("(el) => el.scrollIntoView({ block: 'center' })")
    fresh.set_expanded("w.collapse_all()")
    fresh.page.get_by_test_id("pvw-fit").click()
    fresh.page.wait_for_timeout(500)
    collapsed = save_screenshot(fresh.root, "lenet_collapsed", DOCS_SCREENSHOTS)
    fresh.set_expanded("w.expand_all()")
    fresh.page.get_by_test_id("pvw-fit").click()
    fresh.page.wait_for_timeout(500)
    expanded = save_screenshot(fresh.root, "lenet_expanded", DOCS_SCREENSHOTS)
    fresh.run("w.height = '640px'")
    for shot in (collapsed, expanded):
        assert shot.stat().st_size > 10_000, f"{shot} looks empty"
