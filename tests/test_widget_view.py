"""GraphWidget's view state in the kernel. The browser owns the view rules (js/view: levels,
calls, visible counts, the automatic depth; tested by vitest and tests/browser): the kernel
writes a request (`_request`: a depth, -1 for automatic, then edits in order), and the
browser applies it and answers with `depth`, `expanded` and how far it got (`_resolved`).
Here: that protocol, expand/collapse by layer path or id, and the oracle the browser tests
check the page with. Runs on the JSON fixtures shared with the JS tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.graphs.layer_tree import DEFAULT_NODE_BUDGET, LayerTree
from fixtures.graphs.payload import chain, level, to_depth, visible_nodes, wrapper

from paddleviz_widget.widget import GraphWidget

FIXTURES = Path(__file__).parent / "fixtures" / "graphs"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.json"))


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def shown(graph: dict[str, Any], expanded: set[str]) -> int:
    return len(visible_nodes(graph, expanded))


def widget(graph: dict[str, Any], **kwargs: Any) -> GraphWidget:
    return GraphWidget.from_graph(graph, **kwargs)


def answer(w: GraphWidget, depth: int, expanded: list[str]) -> None:
    """What the browser sends back once it has applied the whole request."""
    done = [w._request["id"], len(w._request["edits"])]
    w.set_state({"depth": depth, "expanded": expanded, "_resolved": done})
    assert w._answered()


def request(w: GraphWidget) -> tuple[int, list[Any]]:
    return w._request["depth"], w._request["edits"]


@pytest.mark.parametrize("name", NAMES)
def test_the_oracle_reads_the_payload_as_the_plain_readings_do(name: str) -> None:
    graph = load(name)
    tree = LayerTree(graph)
    assert tree.wrapper == wrapper(graph)
    assert tree.level == {g["id"]: level(graph, g["id"]) for g in graph["groups"]}
    for depth in range(tree.max_level + 2):
        assert tree.to_depth(depth) == to_depth(graph, depth)
        opened = set(tree.to_depth(depth))
        assert tree.visible_count(opened) == shown(graph, opened)
    for budget in (5, 20, 60, DEFAULT_NODE_BUDGET):
        depth = tree.auto_depth(budget)
        at = lambda d: shown(graph, set(to_depth(graph, d)))  # noqa: E731
        assert depth == 0 or at(depth) <= budget
        assert depth == tree.max_level + 1 or at(depth + 1) > budget


def test_a_new_widget_asks_the_browser_to_open_its_groups() -> None:
    graph = load("nested")
    w = widget(graph)
    assert (w.depth, w.expanded, request(w)) == (-1, [], (-1, []))  # automatic: browser picks
    assert not w._answered()
    w = widget(graph, depth=1)
    assert (w.depth, request(w)) == (1, (1, []))
    with pytest.raises(ValueError, match="depth"):
        widget(graph, depth=-2)


def test_depth_from_python_is_a_request_and_the_browser_answer_is_not() -> None:
    graph = load("nested")
    w = widget(graph)
    answer(w, 2, to_depth(graph, 2))
    first = w._request["id"]
    assert (w.depth, w.expanded) == (2, to_depth(graph, 2))
    assert w._request["id"] == first  # the answer asked for nothing new
    w.depth = 1  # from Python: a new request; `expanded` is the browser's to fill in
    assert (w.depth, request(w), w._request["id"]) == (1, (1, []), first + 1)
    assert not w._answered()
    answer(w, 1, to_depth(graph, 1))
    w.depth = -1  # back to automatic
    assert request(w) == (-1, [])
    answer(w, 0, [])
    w.graph = load("lenet")  # a new payload: a new request, automatic as last asked
    assert (w.depth, request(w)) == (-1, (-1, []))


def test_expand_and_collapse_by_layer_path_or_id() -> None:
    graph = load("nested")
    w = widget(graph, depth=0)
    answer(w, 0, [])
    inner = max(graph["groups"], key=lambda g: level(graph, g["id"]))
    w.expand(inner["name"])
    assert set(w.expanded) == set(chain(graph, inner["id"]))  # with every enclosing group
    order = [g["id"] for g in graph["groups"]]
    assert w.expanded == sorted(w.expanded, key=order.index)
    outer = chain(graph, inner["id"])[-1]
    w.collapse(outer)  # by id
    assert outer not in w.expanded and inner["id"] in w.expanded
    w.expand_all()
    assert w.expanded == order  # the browser sets the depth, and cuts it to what it can draw
    # The browser applies these on top of what it shows (js/view/expansion.ts applyEdits).
    assert request(w) == (0, [["open", inner["id"]], ["close", outer], ["all"]])
    answer(w, max(level(graph, g) for g in order) + 1, order)
    w.collapse_all()
    assert (w.expanded, w.depth, request(w)) == ([], 0, (0, []))


def test_edits_go_to_the_browser_in_order() -> None:
    graph = load("nested")
    w = widget(graph, depth=1)
    inner = max(graph["groups"], key=lambda g: level(graph, g["id"]))
    outer = chain(graph, inner["id"])[-1]
    w.expand(inner["id"])
    w.collapse(outer)
    w.expanded = [outer]  # set by hand: that is the state, after what came before
    assert w.expanded == [outer]
    assert request(w) == (1, [["open", inner["id"]], ["close", outer], ["set", [outer]]])
    w.set_state({"expanded": to_depth(graph, 1)})  # a click in the browser asks for nothing
    assert len(w._request["edits"]) == 3


def test_unknown_group_names_list_close_matches() -> None:
    graph = load("lenet")
    w = widget(graph)
    name = next(g["name"] for g in graph["groups"] if "." in g["name"])  # e.g. "conv.0"
    typo = name.replace(".", "")
    with pytest.raises(ValueError) as info:
        w.expand(typo)
    assert repr(name) in str(info.value)
    with pytest.raises(ValueError):
        w.collapse("definitely_not_a_layer")


def test_selection_survives_only_while_its_id_exists() -> None:
    graph = load("lenet")
    w = widget(graph)
    w.selected = graph["nodes"][3]["id"]
    w.graph = load("nested")
    nested_ids = {n["id"] for n in load("nested")["nodes"]}
    assert w.selected == (graph["nodes"][3]["id"] if graph["nodes"][3]["id"] in nested_ids else "")
    w.selected = "n29"  # nested's, not lenet's (an id no graph has is refused: test_widget_picks)
    w.graph = load("lenet")
    assert w.selected == ""
