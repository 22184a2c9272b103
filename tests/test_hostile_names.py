"""Hostile names from user code (issue 11, item 4): layer paths, a layer class and a parameter
name made of markup, quotes, braces, Graphviz escapes, newlines, %, entities and non-ASCII
(tests/hostile_model.py) stay verbatim in the graph, and make_graph's DOT stays valid: the
`dot` binary lays it out without a warning, into well-formed SVG that holds only plain shapes
and text, each label exactly the name it shows.
"""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from typing import Any

import paddle
import pytest
from hostile_model import CLASS, LAYERS, PARAM, hostile_output, hostile_params

from paddleviz_widget import build_graph, make_graph
from paddleviz_widget.compat.paddleviz import graph_to_digraph
from paddleviz_widget.graph import Graph, nested_dict

SVG = "{http://www.w3.org/2000/svg}"
# What Graphviz draws plain labels and shapes with: no <a>, <image>, <script>, <foreignObject>.
PLAIN = {"svg", "g", "title", "text", "path", "polygon", "polyline", "ellipse"}


@pytest.fixture(scope="module", params=[True, False], ids=["traced", "untraced"])
def hostile(request: pytest.FixtureRequest) -> tuple[Any, paddle.Tensor]:
    return hostile_output(traced=request.param)


def _layout(source: str) -> ET.Element:
    """`source` laid out by the dot binary, which must neither fail nor warn."""
    run = subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True, check=False)
    assert run.returncode == 0 and run.stderr == b"", run.stderr.decode(errors="replace")
    return ET.fromstring(run.stdout)  # well-formed XML, or this raises


def _drawn(svg: ET.Element, kind: str) -> dict[str, list[str]]:
    """Title (node id, or "a->b") -> the lines of text drawn, for each <g class=kind>."""
    out = {}
    for g in svg.iter(f"{SVG}g"):
        if g.get("class") == kind:
            title = g.find(f"{SVG}title")
            assert title is not None and title.text is not None
            out[title.text] = [t.text or "" for t in g.iter(f"{SVG}text")]
    return out


def test_the_traced_graph_keeps_every_name_verbatim() -> None:
    model, y = hostile_output(traced=True)
    doc = nested_dict(build_graph(y, params=hostile_params(model)))
    types = {g["name"]: g["type"] for g in doc["groups"]}
    expected = {name: CLASS if name == LAYERS[2] else "Linear" for name in LAYERS}
    assert {name: types.get(name) for name in LAYERS} == expected
    assert types[f"{LAYERS[2]}.inner"] == "Linear"
    params = {n["param"]["name"] for n in doc["nodes"] if n["param"]}
    linears = [f"{LAYERS[2]}.inner" if n == LAYERS[2] else n for n in LAYERS]
    assert params == {PARAM} | {f"{n}.{p}" for n in linears for p in ("weight", "bias")}


def test_make_graph_lays_out_every_name_as_its_text(hostile: tuple[Any, paddle.Tensor]) -> None:
    model, y = hostile
    params = hostile_params(model)
    graph = Graph.from_dict(build_graph(y, params=params))
    svg = _layout(make_graph(y, dpi="72", params=params).source)
    assert {el.tag.removeprefix(SVG) for el in svg.iter()} <= PLAIN

    nodes = _drawn(svg, "node")
    assert set(nodes) == {n.id for n in graph.nodes}
    for node in graph.nodes:
        if node.kind == "param" and node.param is not None:
            shape = [] if node.param.shape is None else [str(list(node.param.shape))]
            assert nodes[node.id] == [*node.param.name.split("\n"), *shape]
        else:
            assert nodes[node.id] == [node.name]
    shown = "\n".join(line for lines in nodes.values() for line in lines)
    for name in [PARAM, *LAYERS]:
        assert name in shown

    edges = _drawn(svg, "edge")
    for edge in graph.edges:
        if edge.grad is not None:
            shape = "?" if edge.grad.shape is None else str(list(edge.grad.shape))
            want = [edge.grad.dtype or "?", edge.grad.place or "?", shape]
            assert edges[f"{edge.target}->{edge.source}"] == want


def test_controls_and_bidi_overrides_are_shown_as_escapes() -> None:
    model, y = hostile_output(traced=False)
    doc = build_graph(y, params=hostile_params(model))
    graph = Graph.from_dict(doc)
    node = next(n for n in graph.nodes if n.param is not None and n.param.name == PARAM)
    doc_nested = nested_dict(doc)
    for n in doc_nested["nodes"]:
        if n["id"] == node.id:
            n["param"]["name"] = "bell\x07\r\nform\x0cfeed\u202eexe.\u2067"
    svg = _layout(graph_to_digraph(Graph.from_dict(doc_nested), dpi="72").source)
    assert _drawn(svg, "node")[node.id][:2] == ["bell\\u0007", "form\\u000cfeed\\u202eexe.\\u2067"]


def test_a_name_from_bytes_that_are_not_utf8_renders(tmp_path) -> None:
    # A layer named after a file name in Latin-1 bytes (os.fsdecode: a lone surrogate).
    model = paddle.nn.Sequential()
    model.add_sublayer(os.fsdecode(b"caf\xe9"), paddle.nn.Linear(3, 2))
    y = model(paddle.randn([2, 3]))
    written = make_graph(y, dpi="72").render(str(tmp_path / "g.gv"), format="svg")
    labels = _drawn(ET.parse(written).getroot(), "node")
    assert ["caf\ufffd.weight", "[3, 2]"] in labels.values()
