"""Static pictures made in the kernel (paddleviz_widget/export): the explorer's first view as
DOT (its own view rules, run in V8), laid out by Graphviz's `dot` into SVG/PNG, and the
picture every GraphWidget output carries for saved notebooks (widget/static_picture.py). That
the picture holds the nodes the live explorer draws is checked in a browser:
tests/browser/test_static_fallback.py."""

from __future__ import annotations

import html
import json
import os
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from fixtures.graphs.payload import drawn_edges, to_depth, visible_nodes
from hostile_model import CLASS, LAYERS, hostile_output, hostile_params
from models import LeNet

from paddleviz_widget import build_graph, trace
from paddleviz_widget.export import (
    StaticPictureUnavailable,
    render_picture,
    static_view,
    view_dot,
)
from paddleviz_widget.graph import nested_dict
from paddleviz_widget.widget import GraphWidget
from paddleviz_widget.widget.static_picture import CAPTION, MAX_NODES

SVG = "{http://www.w3.org/2000/svg}"
# What Graphviz draws our DOT with, and the block around it.
PLAIN = {"svg", "g", "text", "path", "polygon", "polyline", "ellipse", "div"}
# The payload readings these tests check against (fixtures/graphs/payload.py) know no folding.
UNFOLDED = {"fold": False}
FIXTURE = Path(__file__).parent / "fixtures" / "graphs" / "lenet.json"
REPO = Path(__file__).resolve().parents[1]


def _traced(name: str) -> dict[str, Any]:
    import paddle

    paddle.seed(0)
    model = LeNet() if name == "lenet" else paddle.vision.models.resnet18()
    x = paddle.randn([1, 3, 32, 32] if name == "lenet" else [1, 3, 64, 64])
    with trace(model):
        y = model(x)
        y.sum().backward()
    return build_graph(y, model=model)


@pytest.fixture(scope="module", params=["lenet", "resnet18"])
def graph(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _traced(request.param)


def _svg_ids(svg: ET.Element, kind: str, prefix: str = "") -> list[str]:
    return [
        g.get("id", "")[len(prefix) :]
        for g in svg.iter(f"{SVG}g")
        if (g.get("class") or "").split(" ")[0] == kind
    ]


def test_the_picture_draws_each_node_of_the_view_once(graph: dict[str, Any]) -> None:
    view = static_view(graph, options=UNFOLDED)
    svg = ET.fromstring(render_picture(view.dot, "svg"))
    drawn = _svg_ids(svg, "node")
    assert sorted(drawn) == sorted(f"pvw-{v}" for v in view.visible)
    doc = nested_dict(graph)
    assert set(view.visible) == visible_nodes(doc, set(view.expanded))
    edges = {f"pvw-{e}" for e in drawn_edges(doc, set(view.expanded))}
    assert set(_svg_ids(svg, "edge")) == edges
    assert 0 < len(view.visible) <= 150  # the automatic depth's budget
    folded = static_view(graph)  # ResNet-18's repeated blocks: one node per run
    assert len(folded.visible) <= len(view.visible)
    drawn = _svg_ids(ET.fromstring(render_picture(folded.dot, "svg")), "node")
    assert sorted(drawn) == sorted(f"pvw-{v}" for v in folded.visible)


def test_png_is_a_png_of_plausible_size(graph: dict[str, Any]) -> None:
    png = render_picture(view_dot(graph), "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert 100 < width < 20_000 and 100 < height < 50_000, (width, height)
    assert len(png) > 5_000


def test_depth_and_groups_open_as_asked(graph: dict[str, Any]) -> None:
    closed = static_view(graph, depth=0, options=UNFOLDED)
    doc = nested_dict(graph)
    assert closed.expanded == to_depth(doc, 0)
    assert set(closed.visible) == visible_nodes(doc, set(closed.expanded))
    assert len(closed.visible) < len(static_view(graph, options=UNFOLDED).visible)
    every = [g["id"] for g in doc["groups"]]
    opened = static_view(graph, expanded=every)  # folded runs whose members are open show them
    assert opened.expanded == every
    assert sorted(opened.visible) == sorted(n["id"] for n in doc["nodes"])
    lr = view_dot(graph, options={"rankdir": "LR", "edgeLabels": True})
    assert "rankdir=LR" in lr and re.search(r" -> [^\n]* label=\"", lr)


def test_bad_options_name_the_fix() -> None:
    doc = json.loads(FIXTURE.read_text())
    with pytest.raises(ValueError, match=r"no layer group nope in this graph \(its ids: g0"):
        view_dot(doc, expanded=["nope"])
    with pytest.raises(ValueError, match="depth must be an integer >= 0"):
        view_dot(doc, depth=-5)
    with pytest.raises(ValueError, match=r"no gradient statistics: build it inside trace"):
        view_dot(doc, options={"step": 3})
    with pytest.raises(ValueError, match="fmt must be one of 'svg', 'png', got 'gif'"):
        render_picture("digraph { a }", "gif")
    with pytest.raises(ValueError, match="not a JSON graph document .*pass build_graph"):
        # (a dict with no version at all: test_view_dot_input.py)
        view_dot({"schema_version": "2.3", "nodes": [object()]})
    with pytest.raises(StaticPictureUnavailable, match='schema_version "9" is a newer .*upgrade'):
        view_dot({"schema_version": "9"})


def test_a_layout_past_its_timeout_is_stopped() -> None:
    chain = " ".join(f"n{i} -> n{i + 1};" for i in range(4000))
    with pytest.raises(StaticPictureUnavailable, match=r"Graphviz took over 0\.001 s"):
        render_picture(f"digraph {{ {chain} }}", "svg", timeout=0.001)


# -- the fallback in every GraphWidget output --------------------------------------------------


def _fallback(widget: GraphWidget) -> tuple[dict[str, Any], ET.Element]:
    data, _ = widget._repr_mimebundle_()
    return data, ET.fromstring(data["text/html"])  # well-formed, or this raises


def _view_ids(block: ET.Element) -> tuple[str, list[str]]:
    svg = next(block.iter(f"{SVG}svg"))
    ids = [g.get("id", "") for g in svg.iter(f"{SVG}g") if "node" in (g.get("class") or "")]
    prefix = ids[0][: ids[0].index("pvw-")]
    return prefix, [i[len(prefix) :] for i in ids]


def test_each_output_carries_the_default_view_as_svg() -> None:
    lenet = _traced("lenet")
    one, two = (GraphWidget.from_graph(lenet, depth=depth) for depth in (None, 0))
    data, block = _fallback(one)
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == one.model_id
    prefix, ids = _view_ids(block)
    assert sorted(ids) == sorted(f"pvw-{v}" for v in static_view(one.graph).visible)
    assert "".join(block.itertext()).endswith(CAPTION)
    n = {key: len(nested_dict(one.graph)[key]) for key in ("nodes", "edges", "groups")}
    counts = f"{n['nodes']} GradNodes · {n['edges']} edges · {n['groups']} layer groups"
    assert data["text/plain"].startswith(f"GraphWidget: {counts} — showing {len(ids)} nodes")
    assert "<script" not in data["text/html"]
    # Another widget on the same page: its own depth, no id in common.
    data2, block2 = _fallback(two)
    prefix2, ids2 = _view_ids(block2)
    closed = static_view(two.graph, depth=0)
    assert sorted(ids2) == sorted(f"pvw-{v}" for v in closed.visible)
    ids_of = lambda text: set(re.findall(r' id="([^"]+)"', text))  # noqa: E731
    assert prefix != prefix2 and not ids_of(data["text/html"]) & ids_of(data2["text/html"])
    # A request the page has not answered yet (depth 0, then open "fc") is what it shows.
    two.expand("fc")
    doc = nested_dict(two.graph)
    fc = next(g["id"] for g in doc["groups"] if g["name"] == "fc")
    expected = visible_nodes(doc, {*closed.expanded, fc})
    assert sorted(_view_ids(_fallback(two)[1])[1]) == sorted(f"pvw-{v}" for v in expected)
    assert len(expected) > len(closed.visible)


def _reason(widget: GraphWidget) -> str:
    data, block = _fallback(widget)
    assert block.find(f".//{SVG}svg") is None
    text = html.unescape("".join(block.itertext()))
    assert text.startswith("No static picture of this graph (") and "\n" not in text
    assert data["text/plain"].endswith(text)
    return text


def test_a_graph_the_view_cannot_read_gets_a_reason_not_an_error() -> None:
    widget = GraphWidget.from_graph({"schema_version": "9"})
    assert "pip install -U paddleviz_widget" in _reason(widget)


def test_a_view_too_big_for_a_saved_picture_gets_a_reason() -> None:
    n = MAX_NODES + 50
    nodes = [{"id": f"n{i}", "name": "AddGradNode", "ptr": "0x0", "kind": "op"} for i in range(n)]
    edges = [{"id": f"e{i}", "source": f"n{i}", "target": f"n{i + 1}"} for i in range(n - 1)]
    doc = {"schema_version": "1.0", "nodes": nodes, "edges": edges, "groups": []}
    widget = GraphWidget.from_graph(doc)
    assert f"its default view has {n:,} nodes, over the {MAX_NODES}" in _reason(widget)


def test_hostile_names_stay_text_in_the_saved_picture() -> None:
    model, y = hostile_output(traced=True)
    widget = GraphWidget(y, params=hostile_params(model), depth=9)
    data, block = _fallback(widget)
    for el in block.iter():
        tag = el.tag.split("}")[-1]
        assert tag in PLAIN, tag
        assert not [a for a in el.attrib if a.lower().startswith("on") or "href" in a.lower()]
    texts = [t.text or "" for t in block.iter(f"{SVG}text")]
    drawn = "\n".join(texts)
    for name in [*LAYERS, CLASS]:
        for line in name.split("\n"):
            assert line in drawn, line
    # The markup is in text nodes only: nowhere is it an element or attribute.
    assert "<img" not in data["text/html"] and "<svg onload" not in data["text/html"]
    assert "pwned" not in "".join(f"{k}={v}" for el in block.iter() for k, v in el.attrib.items())


def _run(code: str, env: Mapping[str, str] | None = None, timeout: float = 240) -> str:
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO / "tests",
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_without_dot_the_output_says_so_in_one_line(tmp_path: Path) -> None:
    code = f"""
import json
from paddleviz_widget.export import StaticPictureUnavailable, render_picture, view_dot
from paddleviz_widget.widget import GraphWidget
doc = json.load(open({str(FIXTURE)!r}))
try:
    render_picture(view_dot(doc), "svg")
except StaticPictureUnavailable as err:
    print(json.dumps(err.reason))
data, _ = GraphWidget.from_graph(doc)._repr_mimebundle_()
print(json.dumps(data))
"""
    out = _run(code, env={"PATH": str(tmp_path)}).splitlines()
    reason = "Graphviz's `dot` is not installed: apt install graphviz / conda install graphviz"
    assert json.loads(out[0]) == reason
    data = json.loads(out[1])
    assert "application/vnd.jupyter.widget-view+json" in data
    assert html.unescape(data["text/html"]).count(reason) == 1
    assert data["text/plain"].endswith(f"({reason}): run the notebook to explore.")


def test_the_process_exits_after_making_a_picture() -> None:
    # The V8 context is closed at exit: freed by the garbage collector, it blocks for ever.
    code = f"""
import json
from paddleviz_widget.export import render_picture, view_dot
print(len(render_picture(view_dot(json.load(open({str(FIXTURE)!r}))), "svg")))
"""
    assert int(_run(code, timeout=120)) > 1000
