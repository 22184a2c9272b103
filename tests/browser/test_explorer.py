"""The explorer's graph view in a real JupyterLab: layer groups, hover, inspector, selection,
the tracer's notice and the Python <-> browser traits, on LeNet
(tests/browser/notebooks/explorer.ipynb; the toolbar, search, themes and the docs'
screenshots: test_explorer_toolbar.py).

One notebook run serves the whole module (the page is module-scoped); each test first puts the
widget into the state it needs from the kernel. Expected values come from the widget's own
payload (``w.graph``, read from the kernel), never from constants.
"""

from __future__ import annotations

from typing import Any

import pytest
from explorer_page import (
    CLUSTER_POINT_JS,
    EDGE_POINT_JS,
    EXECUTE_JS,
    GRAPH,
    SCREEN_CENTRE_JS,
    TIMEOUT_MS,
    Explorer,
    hover_edge,
)
from fixtures.graphs.payload import (
    chain,
    descendants,
    drawn_edges,
    largest_partial_group,
    shape_text,
    to_depth,
    visible_clusters,
    visible_nodes,
    wrapper,
)
from graph_dicts import nested
from lab_page import save_screenshot

NOTEBOOK = "explorer.ipynb"
# The inspector's words for each gradient source (js/view/grad_source.ts), as a user reads them.
SOURCE_WORDS = {
    "vlog": "the trace's log",
    "dump": "Paddle's dump",
    "replay-vlog": "a replay's log",
    "replay-dump": "a replay's dump",
    "param": "inferred from the parameter",
    "trace-layers": "the trace record",  # a node's layer group and name (meta.sources.nodes)
    **{"param-owner": "inferred from the parameter's layer", "model": "the model"},
}


@pytest.fixture(scope="module")
def graph(explorer: Explorer) -> dict[str, Any]:
    payload = nested(explorer.value("w.graph"))  # sent as schema 2.0; read here nested
    assert payload["groups"], "the explorer notebook should give LeNet its layer groups"
    return payload


@pytest.fixture
def fresh(explorer: Explorer) -> Explorer:
    """Every group open, nothing selected, no search: the state each test starts from."""
    explorer.reset()
    return explorer


# -- tests --------------------------------------------------------------------------------------


def test_default_view_matches_payload(explorer: Explorer, graph: dict[str, Any]) -> None:
    # The browser picked the default depth, drew exactly that picture and synced it back.
    expanded = set(explorer.value("w.expanded"))
    if len(graph["nodes"]) <= 150:
        assert expanded == {g["id"] for g in graph["groups"]}
    assert explorer.node_ids() == {f"pvw-{i}" for i in visible_nodes(graph, expanded)}
    assert explorer.cluster_ids() == {f"pvw-{g}-cluster" for g in visible_clusters(graph, expanded)}
    for group in graph["groups"]:
        if group["id"] in expanded:
            label = explorer.element(f"pvw-{group['id']}-cluster").locator("text").first
            assert group["name"] in (label.text_content() or "")
    assert explorer.page.get_by_test_id("pvw-legend").is_visible()


def test_collapse_and_expand_by_click(fresh: Explorer, graph: dict[str, Any]) -> None:
    group = largest_partial_group(graph)
    gid = group["id"]
    everything = {g["id"] for g in graph["groups"]}
    shown_before = len(fresh.node_ids())

    # Elements are keyed by id across redraws (so they can animate): a node outside the group
    # keeps its very DOM element through the collapse.
    inside = {n["id"] for n in descendants(graph, gid)}
    keeper = next(f"pvw-{n['id']}" for n in graph["nodes"] if n["id"] not in inside)
    fresh.page.evaluate("(id) => { document.getElementById(id).pvwKept = true; }", keeper)

    # Click the expanded cluster's header label: the group collapses into one node.
    before = fresh.renders()
    fresh.element(f"pvw-{gid}-cluster").locator("text").first.click()
    fresh.wait_ready(after=before)
    collapsed = visible_nodes(graph, everything - {gid})
    assert fresh.node_ids() == {f"pvw-{i}" for i in collapsed}
    assert len(collapsed) < shown_before
    assert fresh.element(f"pvw-{gid}-cluster").count() == 0
    node = fresh.element(f"pvw-{gid}")
    label = node.text_content() or ""
    ops = sum(1 for n in descendants(graph, gid) if n["kind"] != "param")
    assert group["name"] in label and group["type"] in label and f"{ops} ops" in label
    assert gid not in fresh.value("w.expanded")
    assert fresh.page.evaluate("(id) => document.getElementById(id).pvwKept === true", keeper)

    # Edges crossing the boundary are merged per pair of ends; hovering one lists every
    # gradient that crosses there.
    drawn = drawn_edges(graph, everything - {gid})
    edge_ids = fresh.page.locator(f"{GRAPH} svg g.edge").evaluate_all("(els) => els.map(e => e.id)")
    assert sorted(edge_ids) == sorted(f"pvw-{i}" for i in drawn)
    touching = [
        i for i, es in drawn.items() if (es[0]["source"] in inside) != (es[0]["target"] in inside)
    ]
    crossing = max(touching, key=lambda i: len(drawn[i]))  # the most merged one
    hover_edge(fresh, f"pvw-{crossing}")
    tip = fresh.page.get_by_test_id("pvw-tooltip").inner_text()
    for e in drawn[crossing]:
        assert shape_text(e["grad"]["shape"]) in tip

    # Click the collapsed group's node: it opens again.
    before = fresh.renders()
    node.click()
    fresh.wait_ready(after=before)
    assert len(fresh.node_ids()) == shown_before
    assert fresh.element(f"pvw-{gid}-cluster").count() == 1
    assert gid in fresh.value("w.expanded")


def test_zoomed_in_redraw_keeps_the_clicked_group_in_place(
    fresh: Explorer, graph: dict[str, Any]
) -> None:
    gid = largest_partial_group(graph)["id"]
    fresh.run(f"w.selected = {gid!r}")
    fresh.page.get_by_test_id("pvw-zoom-in").click()  # the user zooms: no more auto-fit
    fresh.page.wait_for_timeout(400)
    for before_id, after_id in (
        (f"pvw-{gid}-cluster", f"pvw-{gid}"),
        (f"pvw-{gid}", f"pvw-{gid}-cluster"),
    ):
        x0, y0 = fresh.page.evaluate(SCREEN_CENTRE_JS, before_id)
        label = fresh.element(before_id).locator("text").first
        before = fresh.renders()
        label.click()
        fresh.wait_ready(after=before)
        x1, y1 = fresh.page.evaluate(SCREEN_CENTRE_JS, after_id)
        # Horizontally centred in place; vertically the cluster grows around the node's spot.
        assert abs(x1 - x0) < 6, (before_id, x0, x1)
        assert abs(y1 - y0) < 6, (before_id, y0, y1)


def test_hover_edge_shows_gradient(fresh: Explorer, graph: dict[str, Any]) -> None:
    edges = [e for e in graph["edges"] if e["grad"] is not None]
    for edge in (edges[0], edges[len(edges) // 2], edges[-1]):
        hover_edge(fresh, f"pvw-{edge['id']}")
        text = fresh.page.get_by_test_id("pvw-tooltip").inner_text()
        grad = edge["grad"]
        assert shape_text(grad["shape"]) in text
        assert grad["dtype"] in text and grad["place"] in text
        if edge.get("slot"):
            assert edge["slot"] in text
    # Hovering a node shows its summary.
    param = next(n for n in graph["nodes"] if n["param"])
    fresh.element(f"pvw-{param['id']}").hover()
    assert param["param"]["name"] in fresh.page.get_by_test_id("pvw-tooltip").inner_text()


def test_inspector_for_clicked_node(fresh: Explorer, graph: dict[str, Any]) -> None:
    # An op inside a layer, with neighbours on both sides.
    node = next(
        n
        for n in graph["nodes"]
        if n["kind"] == "op"
        and n["group"]
        and any(e["target"] == n["id"] for e in graph["edges"])
        and any(e["source"] == n["id"] for e in graph["edges"])
    )
    fresh.element(f"pvw-{node['id']}").click()
    inspector = fresh.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    text = inspector.inner_text()
    group = next(g for g in graph["groups"] if g["id"] == node["group"])
    assert node["name"] in text
    assert group["name"] in text and group["type"] in text
    for slot in (node.get("inputs") or []) + (node.get("outputs") or []):
        assert slot["name"] in text and shape_text(slot["shape"]) in text
    neighbours = [e["source"] for e in graph["edges"] if e["target"] == node["id"]]
    neighbours += [e["target"] for e in graph["edges"] if e["source"] == node["id"]]
    refs = inspector.locator("section", has_text="Neighbours").locator("[data-ref]")
    assert refs.evaluate_all("(els) => els.map((e) => e.dataset.ref)") == neighbours
    # The selection highlights the paths through the node.
    assert "pvw-selected" in (fresh.element(f"pvw-{node['id']}").get_attribute("class") or "")
    upstream = fresh.page.locator(f"{GRAPH} svg g.node.pvw-upstream").count()
    downstream = fresh.page.locator(f"{GRAPH} svg g.node.pvw-downstream").count()
    assert upstream > 0 and downstream > 0

    # A neighbour is a link: following it selects that node, in the kernel too.
    refs.last.click()
    fresh.page.wait_for_function(
        "(id) => document.querySelector('[data-testid=pvw-inspector]').dataset.id === id",
        arg=neighbours[-1],
        timeout=TIMEOUT_MS,
    )
    assert fresh.value_becomes("w.selected", neighbours[-1]) == neighbours[-1]

    # A parameter node shows the parameter's name and shape.
    param = next(n for n in graph["nodes"] if n["param"])
    fresh.element(f"pvw-{param['id']}").click()
    fresh.page.wait_for_function(
        "(id) => document.querySelector('[data-testid=pvw-inspector]').dataset.id === id",
        arg=param["id"],
        timeout=TIMEOUT_MS,
    )
    text = inspector.inner_text()
    assert param["param"]["name"] in text and shape_text(param["param"]["shape"]) in text
    # ... and where its name and its layer came from, as the document records them.
    sources, k = graph["meta"]["sources"], graph["nodes"].index(param)
    for field, title in (("param", "Parameter"), ("group", "Layer")):
        shown = inspector.locator("section", has_text=title).first.inner_text()
        assert SOURCE_WORDS[sources["codes"][sources["nodes"][field][k]]] in shown


def test_click_selects_in_kernel(fresh: Explorer, graph: dict[str, Any]) -> None:
    edge = graph["edges"][len(graph["edges"]) // 2]
    hover_edge(fresh, f"pvw-{edge['id']}")
    point = fresh.page.evaluate(EDGE_POINT_JS, [f"pvw-{edge['id']}", 0.5])
    fresh.page.mouse.click(point["x"], point["y"])
    assert fresh.value_becomes("w.selected", edge["id"]) == edge["id"]
    inspector = fresh.page.get_by_test_id("pvw-inspector").inner_text()
    assert shape_text(edge["grad"]["shape"]) in inspector
    # ... and where that shape came from (meta.sources), so the user knows how far to trust it.
    sources = graph["meta"]["sources"]
    code = sources["edges"][graph["edges"].index(edge)]
    assert SOURCE_WORDS[sources["codes"][code]] in inspector
    save_screenshot(fresh.page.get_by_test_id("pvw-inspector"), "inspector_source")

    group = largest_partial_group(graph)
    point = fresh.page.evaluate(CLUSTER_POINT_JS, f"pvw-{group['id']}-cluster")
    assert point, "no free spot inside the cluster"
    fresh.page.mouse.click(point["x"], point["y"])
    assert fresh.value_becomes("w.selected", group["id"]) == group["id"]
    params = [n for n in descendants(graph, group["id"]) if n["kind"] == "param"]
    text = fresh.page.get_by_test_id("pvw-inspector").inner_text()
    assert group["type"] in text and f"{len(params)} tensors" in text


def test_python_drives_the_view(fresh: Explorer, graph: dict[str, Any]) -> None:
    fresh.set_expanded("w.collapse_all()")
    closed = {wrapper(graph)} - {None}  # a group around everything stays open
    assert set(fresh.value("w.expanded")) == closed
    assert fresh.node_ids() == {f"pvw-{i}" for i in visible_nodes(graph, closed)}
    assert fresh.cluster_ids() == {f"pvw-{g}-cluster" for g in visible_clusters(graph, closed)}

    group = largest_partial_group(graph)
    fresh.set_expanded(f"w.expand({group['name']!r})")  # opens the groups around it too
    opened = set(chain(graph, group["id"]))
    assert set(fresh.value("w.expanded")) == opened
    assert fresh.element(f"pvw-{group['id']}-cluster").count() == 1
    assert fresh.node_ids() == {f"pvw-{i}" for i in visible_nodes(graph, opened)}

    out = fresh.page.evaluate(EXECUTE_JS, "w.expand('no_such_layer')")
    assert "ValueError" in out

    fresh.set_expanded("w.depth = 1")
    top = set(to_depth(graph, 1))
    assert fresh.node_ids() == {f"pvw-{i}" for i in visible_nodes(graph, top)}
    assert fresh.page.get_by_test_id("pvw-depth").input_value() == "1"

    node = graph["nodes"][len(graph["nodes"]) // 2]
    fresh.run(f"w.selected = {node['id']!r}")
    fresh.page.wait_for_function(
        "(id) => document.querySelector('[data-testid=pvw-inspector]').dataset.id === id",
        arg=node["id"],
        timeout=TIMEOUT_MS,
    )


def test_shows_the_tracer_notice(fresh: Explorer) -> None:
    notice = fresh.page.get_by_test_id("pvw-notice")
    assert fresh.value("w.graph['meta'].get('notice')") is None
    assert notice.is_hidden()
    text = "Gradient shapes need Paddle's backward log (test notice)"
    try:
        fresh.run(f"w.graph = {{**w.graph, 'meta': {{**w.graph['meta'], 'notice': {text!r}}}}}")
        notice.wait_for(state="visible")
        assert notice.inner_text() == text
    finally:
        fresh.run(
            "w.graph = {**w.graph, 'meta': {k: v for k, v in w.graph['meta'].items() "
            "if k != 'notice'}}"
        )
    notice.wait_for(state="hidden")
