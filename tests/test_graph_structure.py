"""build_graph's nodes and edges equal Paddle's own backward dump (issue 2, item 3)."""

from __future__ import annotations

import json
import sys

import paddle
import pytest
from graph_dicts import nested, nested_graph
from models import lenet_output, resnet18_output
from oracle import backward_with_dump, dump_edge_multiset, edge_multiset
from paddle_versions import requires_dump

from paddleviz_widget import build_graph
from paddleviz_widget.graph import validate_graph_dict


@requires_dump
@pytest.mark.parametrize("make", [lenet_output, resnet18_output], ids=["lenet", "resnet18"])
def test_nodes_and_edges_equal_paddle_dump(make, tmp_path):
    _, y = make()
    loss = y.sum()
    graph = nested_graph(loss)
    dump = backward_with_dump(loss, tmp_path)

    assert {n["ptr"] for n in graph["nodes"]} == set(dump.nodes)
    assert {n["ptr"]: n["name"] for n in graph["nodes"]} == dump.nodes
    assert edge_multiset(graph) == dump_edge_multiset(dump)
    assert len(dump.edges) > 20


@requires_dump
def test_graph_of_y_is_the_dump_minus_the_sum_node(tmp_path):
    _, y = lenet_output()
    graph = nested_graph(y)
    dump = backward_with_dump(y.sum(), tmp_path)
    sum_ptrs = {p for p, name in dump.nodes.items() if name == "SumGradNode"}
    assert len(sum_ptrs) == 1
    assert {n["ptr"] for n in graph["nodes"]} == set(dump.nodes) - sum_ptrs
    expected = dump_edge_multiset(dump)
    for key in list(expected):
        if key[0] in sum_ptrs:
            del expected[key]
    assert edge_multiset(graph) == expected


def test_payload_is_json_and_matches_schema():
    model, y = lenet_output()
    doc = build_graph(y)
    validate_graph_dict(json.loads(json.dumps(doc)))
    assert doc["schema_version"] == "2.3"
    graph = nested(doc)
    assert {n["kind"] for n in graph["nodes"]} == {"op", "param", "output"}
    (root,) = [n for n in graph["nodes"] if n["kind"] == "output"]
    assert root["ptr"] == hex(y.grad_fn.node_ptr())
    assert root["tensor"]["shape"] == list(y.shape)
    params = [n for n in graph["nodes"] if n["kind"] == "param"]
    assert all(n["name"] == "GradNodeAccumulation" for n in params)
    assert {n["ptr"] for n in params} == {hex(p.grad_fn.node_ptr()) for p in model.parameters()}


def test_ids_are_stable_and_not_pointers():
    _, y = lenet_output()
    first, second = nested_graph(y), nested_graph(y)
    assert [n["id"] for n in first["nodes"]] == [n["id"] for n in second["nodes"]]
    assert first["edges"] == second["edges"]
    assert all(not n["id"].startswith("0x") and n["id"] != n["ptr"] for n in first["nodes"])


@requires_dump
def test_duplicate_edges_are_kept(tmp_path):
    w = paddle.create_parameter([3], "float32")
    y = w * w
    graph = nested_graph(y)
    (edge_a, edge_b) = graph["edges"]
    assert (edge_a["source"], edge_a["target"]) == (edge_b["source"], edge_b["target"])
    assert {edge_a["index"], edge_b["index"]} == {0, 1}
    dump = backward_with_dump(y.sum(), tmp_path)
    assert sum(1 for e in dump.edges if dump.nodes[e.source] == "MultiplyGradNode") == 2


def test_deep_graph_needs_no_recursion():
    x = paddle.create_parameter([2], "float32")
    y = x
    depth = 3000
    for _ in range(depth):
        y = y * 1.0001
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth // 10)  # a recursive walk would need > depth frames
    try:
        graph = nested_graph(y)
    finally:
        sys.setrecursionlimit(limit)
    assert len(graph["nodes"]) == depth + 1
    assert len(graph["edges"]) == depth


def test_several_outputs_share_one_graph():
    model, y = lenet_output()
    a, b = y[:, :5].sum(), y[:, 5:].mean()
    graph = nested_graph((a, b))
    outputs = [n for n in graph["nodes"] if n["kind"] == "output"]
    assert {n["ptr"] for n in outputs} == {hex(a.grad_fn.node_ptr()), hex(b.grad_fn.node_ptr())}
    assert [o["node"] for o in graph["meta"]["outputs"]] == [n["id"] for n in outputs]
    single = nested_graph(a)
    assert len(graph["nodes"]) > len(single["nodes"])
