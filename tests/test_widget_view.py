"""GraphWidget's view state in Python: default depth, expand/collapse by layer path or id, and
the depth <-> expanded link. Runs on the JSON fixtures shared with the JS tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import paddle
import pytest
from fixtures.graphs.payload import chain, level, visible_nodes, wrapper

from paddleviz_widget.widget import DEFAULT_NODE_BUDGET, GraphWidget, _LayerTree

FIXTURES = Path(__file__).parent / "fixtures" / "graphs"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.json"))


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def shown(graph: dict[str, Any], expanded: set[str]) -> int:
    return len(visible_nodes(graph, expanded))


def widget(graph: dict[str, Any], **kwargs: Any) -> GraphWidget:
    x = paddle.ones([2, 2])
    x.stop_gradient = False
    w = GraphWidget((x * 2).sum(), **kwargs)
    w.graph = graph
    return w


@pytest.mark.parametrize("name", NAMES)
def test_default_depth_keeps_the_picture_readable(name: str) -> None:
    graph = load(name)
    w = widget(graph)
    deepest = max(level(graph, g["id"]) for g in graph["groups"]) + 1
    assert w.expanded == [g["id"] for g in graph["groups"] if level(graph, g["id"]) < w.depth]
    if w.depth > 0:
        assert shown(graph, set(w.expanded)) <= DEFAULT_NODE_BUDGET
    if w.depth < deepest:
        more = {g["id"] for g in graph["groups"] if level(graph, g["id"]) <= w.depth}
        assert shown(graph, more) > DEFAULT_NODE_BUDGET


@pytest.mark.parametrize("budget", [5, 20, 60])
def test_auto_depth_follows_the_budget(budget: int) -> None:
    graph = load("resnet18")
    tree = _LayerTree(graph)
    depth = tree.auto_depth(budget)
    at = lambda d: shown(graph, set(tree.to_depth(d)))  # noqa: E731
    assert depth == 0 or at(depth) <= budget
    assert depth == tree.max_level + 1 or at(depth + 1) > budget


def test_depth_option_and_trait_open_groups_by_level() -> None:
    graph = load("nested")
    w = widget(graph, depth=1)
    top = [g["id"] for g in graph["groups"] if g.get("parent") is None]
    assert wrapper(graph) is None  # one node lies outside the model's group
    assert (w.depth, w.expanded) == (1, top)
    w.depth = 2
    assert w.expanded == [g["id"] for g in graph["groups"] if level(graph, g["id"]) < 2]
    w.depth = 99  # deeper than the deepest level: everything open
    assert w.expanded == [g["id"] for g in graph["groups"]]
    w.depth = -1  # back to automatic
    assert w.depth >= 0
    with pytest.raises(ValueError, match="depth"):
        widget(graph, depth=-2)


def test_expand_and_collapse_by_layer_path_or_id() -> None:
    graph = load("nested")
    w = widget(graph, depth=0)
    inner = max(graph["groups"], key=lambda g: level(graph, g["id"]))
    w.expand(inner["name"])
    assert set(w.expanded) == set(chain(graph, inner["id"]))  # with every enclosing group
    order = [g["id"] for g in graph["groups"]]
    assert w.expanded == sorted(w.expanded, key=order.index)
    outer = chain(graph, inner["id"])[-1]
    w.collapse(outer)  # by id
    assert outer not in w.expanded and inner["id"] in w.expanded
    w.expand_all()
    assert w.expanded == order and w.depth == max(level(graph, g) for g in order) + 1
    w.collapse_all()
    assert (w.expanded, w.depth) == ([], 0)


def test_a_layer_used_twice_counts_once_per_use() -> None:
    graph = load("resnet18")
    tree = _LayerTree(graph)
    for depth in range(tree.max_level + 2):
        assert tree.visible_count(tree.to_depth(depth)) == shown(graph, set(tree.to_depth(depth)))


def test_a_group_around_everything_stays_open_at_depth_zero() -> None:
    graph = load("lenet")
    root = wrapper(graph)
    assert root is not None, "trace(model) records the model itself as the outermost group"
    w = widget(graph, depth=0)
    assert w.expanded == [root]
    children = [g["id"] for g in graph["groups"] if g.get("parent") == root]
    w.depth = 1
    assert w.expanded == [root, *children]
    w.collapse_all()
    assert w.expanded == [root]
    w.collapse(root)  # still possible on request
    assert w.expanded == []


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
    w.selected = "no_such_id"
    w.graph = load("lenet")
    assert w.selected == ""
