"""Repeated blocks in a real JupyterLab: paddleformers' Llama with 8 decoder layers
(tests/browser/notebooks/fold.ipynb) opens with its layers folded into one node
"model.layers.0–7 · LlamaDecoderLayer ×8"; a click unfolds it, the inspector folds it again,
``w.expand("model.layers.3")`` opens that layer with the others still folded around it, search
opens the layer holding a match, and ``fold=False`` shows every layer.

What the page should draw is worked out here from the payload: the plain picture
(fixtures.graphs.payload.visible_nodes), with each stretch of two or more consecutive decoder
layers that are closed and not unfolded drawn as one node "<first id>..<last id>". That the
layers are alike is known from the model (one config builds them all), not asked of the page.
"""

from __future__ import annotations

from typing import Any

import pytest
from explorer_page import Explorer
from fixtures.graphs.payload import representative, shape_text, visible_nodes
from lab_page import save_screenshot
from playwright.sync_api import Locator

NOTEBOOK = "fold.ipynb"
LAYERS = 8
TITLE = f"model.layers.0\u2013{LAYERS - 1} \u00b7 LlamaDecoderLayer \u00d7{LAYERS}"


@pytest.fixture(scope="module")
def layers(graph: dict[str, Any]) -> list[str]:
    by_name = {g["name"]: g["id"] for g in graph["groups"]}
    return [by_name[f"model.layers.{k}"] for k in range(LAYERS)]


@pytest.fixture
def fresh(explorer: Explorer) -> Explorer:
    """The default view, everything folded: "Collapse all" (a depth preset folds every run
    again), then the automatic depth; nothing selected, no search."""
    search = explorer.root.get_by_test_id("pvw-search")
    if search.input_value():
        search.fill("")
    explorer.run("w.selected = ''; w.fold = True")
    if explorer.value("w.depth") != 0:
        explorer.redrawn(lambda: explorer.root.get_by_test_id("pvw-collapse-all").click())
    explorer.set_expanded("w.depth = -1")
    return explorer


def folded(
    graph: dict[str, Any],
    layers: list[str],
    expanded: set[str],
    unfolded: frozenset[str] = frozenset(),
) -> set[str]:
    """Drawn node ids (with the "pvw-" prefix) when the decoder layers fold."""
    out = visible_nodes(graph, expanded) - set(layers)
    stretches: list[list[str]] = [[]]
    for layer in layers:
        if layer in expanded or layer in unfolded:
            stretches.append([])
            if layer not in expanded:
                out.add(layer)  # unfolded and closed: drawn as itself
        else:
            stretches[-1].append(layer)
    for stretch in stretches:
        if len(stretch) >= 2:
            out.add(f"{stretch[0]}..{stretch[-1]}")
        elif stretch:
            out.add(stretch[0])
    return {f"pvw-{i}" for i in out}


def drawn(root: Locator) -> set[str]:
    """Ids of the nodes drawn in one widget (the notebook shows two)."""
    return set(root.locator("svg g.node").evaluate_all("(els) => els.map((e) => e.id)"))


def element(root: Locator, dom_id: str) -> Locator:
    return root.locator(f"[data-testid=pvw-graph] [id='{dom_id}']")


def run_edges(
    graph: dict[str, Any], layers: list[str], expanded: set[str]
) -> dict[str, list[dict[str, Any]]]:
    """Drawn edge id -> the payload edges it stands for, for the edges into and out of the
    folded run (all layers closed): one per pair of drawn ends, named as drawn_edges names
    them (the payload id when alone, else "<source>-<target>")."""
    run = f"{layers[0]}..{layers[-1]}"
    reps = {n["id"]: representative(graph, n, expanded) for n in graph["nodes"]}
    reps = {n: run if r in layers else r for n, r in reps.items()}
    pairs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in graph["edges"]:
        ends = (reps[e["source"]], reps[e["target"]])
        if ends[0] != ends[1] and run in ends:
            pairs.setdefault(ends, []).append(e)
    return {(es[0]["id"] if len(es) == 1 else f"{s}-{t}"): es for (s, t), es in pairs.items()}


def test_the_decoder_layers_open_folded(
    fresh: Explorer, graph: dict[str, Any], layers: list[str]
) -> None:
    expanded = set(fresh.value("w.expanded"))
    assert not expanded & set(layers), "depths leave the folded layers closed"
    parent = next(g["id"] for g in graph["groups"] if g["name"] == "model.layers")
    assert parent in expanded
    assert drawn(fresh.root) == folded(graph, layers, expanded)
    run = element(fresh.root, f"pvw-{layers[0]}..{layers[-1]}")
    label = run.text_content() or ""
    assert TITLE in label
    assert "each " in label and " ops" in label

    # The gradients entering and leaving the run are labelled with their shapes (edge labels
    # are off for the rest of the picture).
    edges = run_edges(graph, layers, expanded)
    assert len(edges) >= 2
    for edge_id, payload in edges.items():
        text = element(fresh.root, f"pvw-{edge_id}").locator("text").all_text_contents()
        assert text, f"edge {edge_id} into/out of the run has no label"
        for e in payload:
            assert shape_text(e["grad"]["shape"]) in " ".join(text)
    labelled = fresh.root.locator("svg g.edge").evaluate_all(
        "(els) => els.filter((e) => e.querySelector('text')).map((e) => e.id)"
    )
    assert set(labelled) == {f"pvw-{i}" for i in edges}

    run.hover()
    tip = fresh.root.get_by_test_id("pvw-tooltip")
    tip.wait_for(state="visible")
    assert f"{LAYERS} blocks of the same structure, model.layers.0 \u2026 model.layers.7" in (
        tip.inner_text()
    )
    fresh.page.mouse.move(0, 0)
    shot = save_screenshot(fresh.root, "fold_llama")
    assert shot.stat().st_size > 20_000, "screenshot looks empty"


def test_a_click_unfolds_and_the_inspector_folds_again(
    fresh: Explorer, graph: dict[str, Any], layers: list[str]
) -> None:
    expanded = set(fresh.value("w.expanded"))
    run_id = f"{layers[0]}..{layers[-1]}"
    fresh.redrawn(lambda: element(fresh.root, f"pvw-{run_id}").click())
    assert drawn(fresh.root) == folded(graph, layers, expanded, frozenset(layers))
    assert fresh.value("w.selected") == run_id
    inspector = fresh.root.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    assert fresh.root.get_by_test_id("pvw-inspector-title").inner_text() == (
        f"model.layers.0\u2013{LAYERS - 1} \u00d7{LAYERS}"
    )
    # Every layer of the run is selected.
    selected = fresh.root.locator("svg g.node.pvw-selected").evaluate_all(
        "(els) => els.map(e => e.id)"
    )
    assert set(selected) == {f"pvw-{layer}" for layer in layers}
    save_screenshot(fresh.root, "fold_llama_unfolded")

    fresh.redrawn(lambda: inspector.locator("[data-action=fold]").click())
    assert drawn(fresh.root) == folded(graph, layers, expanded)
    assert set(fresh.value("w.expanded")) == expanded


def test_expand_from_python_opens_one_layer_inside_the_run(
    fresh: Explorer, graph: dict[str, Any], layers: list[str]
) -> None:
    fresh.set_expanded("w.expand('model.layers.3')")
    expanded = set(fresh.value("w.expanded"))
    assert layers[3] in expanded
    shown = drawn(fresh.root)
    assert shown == folded(graph, layers, expanded)
    assert {f"pvw-{layers[0]}..{layers[2]}", f"pvw-{layers[4]}..{layers[7]}"} <= shown
    assert element(fresh.root, f"pvw-{layers[3]}-cluster").count() == 1
    label = element(fresh.root, f"pvw-{layers[4]}..{layers[7]}").text_content() or ""
    assert "model.layers.4\u20137 \u00b7 LlamaDecoderLayer \u00d74" in label

    fresh.set_expanded("w.collapse('model.layers.3')")
    assert drawn(fresh.root) == folded(graph, layers, set(fresh.value("w.expanded")))


def test_search_opens_the_layer_holding_the_match(
    fresh: Explorer, graph: dict[str, Any], layers: list[str]
) -> None:
    search = fresh.root.get_by_test_id("pvw-search")
    fresh.redrawn(lambda: search.fill("model.layers.5.mlp.up_proj"))
    shown = drawn(fresh.root)
    assert f"pvw-{layers[5]}" in shown
    assert {f"pvw-{layers[0]}..{layers[4]}", f"pvw-{layers[6]}..{layers[7]}"} <= shown
    current = fresh.root.locator("svg g.node.pvw-match-current").evaluate_all(
        "(els) => els.map(e => e.id)"
    )
    assert current == [f"pvw-{layers[5]}"]
    # Clearing the search folds it back.
    fresh.redrawn(lambda: search.fill(""))
    assert drawn(fresh.root) == folded(graph, layers, set(fresh.value("w.expanded")))


def test_expand_all_says_the_folded_layers_stay_closed(
    fresh: Explorer, graph: dict[str, Any], layers: list[str]
) -> None:
    # Expand all keeps a run folded: its status line says so, with the nodes it draws (it said
    # "Expanded every layer group (0 nodes)" when every other group was open already).
    fresh.root.get_by_test_id("pvw-expand-all").click()
    fresh.page.wait_for_function(
        "(r) => r.dataset.state === 'ready' && (r.querySelector('[data-testid=pvw-message]')"
        ".textContent || '').startsWith('Expanded')",
        arg=fresh.root.element_handle(),
    )
    expanded = set(fresh.value("w.expanded"))
    assert not expanded & set(layers)
    shown = drawn(fresh.root)
    assert shown == folded(graph, layers, expanded)
    message = fresh.root.get_by_test_id("pvw-message").inner_text()
    assert message == (
        f"Expanded every layer group but {LAYERS} groups that Expand all keeps closed "
        f"(repeated blocks, to_static programs: a click opens one) ({len(shown)} nodes)."
    )


def test_fold_false_shows_every_layer(
    fresh: Explorer, graph: dict[str, Any], layers: list[str]
) -> None:
    # A second widget made with fold=False.
    second = fresh.page.locator("[data-testid=pvw-root]").nth(1)
    second.scroll_into_view_if_needed()
    second.locator("svg g.node").first.wait_for(state="attached")
    ids = drawn(second)
    expanded2 = set(fresh.value("w2.expanded"))
    assert ids == {f"pvw-{i}" for i in visible_nodes(graph, expanded2)}
    assert not any(".." in i for i in ids)

    # The first one, switched off from Python: every layer on its own, closed.
    expanded = set(fresh.value("w.expanded"))
    fresh.redrawn(lambda: fresh.run("w.fold = False"))
    assert drawn(fresh.root) == {f"pvw-{i}" for i in visible_nodes(graph, expanded)}
    assert {f"pvw-{layer}" for layer in layers} <= drawn(fresh.root)
    fresh.redrawn(lambda: fresh.run("w.fold = True"))
    assert drawn(fresh.root) == folded(graph, layers, expanded)
