"""The seed paddleviz API still works: make_graph(y, dpi) -> graphviz.Digraph (issue 3)."""

from __future__ import annotations

import re
from pathlib import Path

import graphviz
from models import lenet_output

from paddleviz_widget import build_graph, make_graph


def _statements(dot: graphviz.Digraph) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    for line in dot.body:
        edge = re.match(r'\s*(\w+) -> (\w+)(?: \[label="([^"]*)"\])?', line)
        if edge:
            edges.append((edge.group(1), edge.group(2), edge.group(3) or ""))
            continue
        node = re.match(r"\s*(\w+) \[(.*)\]", line)
        if node:
            nodes[node.group(1)] = node.group(2)
    return nodes, edges


def test_make_graph_is_a_digraph_like_the_seeds():
    _, y = lenet_output()
    dot = make_graph(y, dpi="600")
    assert isinstance(dot, graphviz.Digraph)
    assert "rankdir=BT" in dot.source and "dpi=600" in dot.source

    graph = build_graph(y)
    nodes, edges = _statements(dot)
    assert set(nodes) == {n["id"] for n in graph["nodes"]}
    for node in graph["nodes"]:
        shape = "ellipse" if node["kind"] == "param" else "box"
        assert f"shape={shape}" in nodes[node["id"]]
    # The seed drew edges in the forward direction (input -> consumer) with rankdir=BT.
    drawn = sorted((a, b) for a, b, _ in edges)
    assert drawn == sorted((e["target"], e["source"]) for e in graph["edges"])


def test_make_graph_renders_a_png(tmp_path):
    _, y = lenet_output()
    dot = make_graph(y, dpi="72")
    out = dot.render(str(tmp_path / "viz-result.gv"), format="png")
    data = Path(out).read_bytes()
    assert out.endswith(".png") and data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 5_000
