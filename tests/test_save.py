"""save_graph / GraphWidget.save: one graph document to a file, the suffix picking the format,
written whole or not at all (issue 12, part 1)."""

from __future__ import annotations

import collections
import json
import re
import struct
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import paddle
import pytest
from fixtures.graphs.payload import chain, to_depth, visible_clusters, visible_nodes
from graph_dicts import nested
from models import LeNet
from paddle_versions import requires_post_hooks

from paddleviz_widget import GraphWidget, build_graph, trace
from paddleviz_widget.export.save import save_graph
from paddleviz_widget.export.standalone import GRAPH_ID

SVG = "{http://www.w3.org/2000/svg}"


def walk(loss: paddle.Tensor) -> tuple[dict[str, str], collections.Counter]:
    """The oracle: GradNode names by pointer and the edge multiset, read from Paddle's own
    grad_fn / next_functions."""
    names: dict[str, str] = {}
    edges: collections.Counter = collections.Counter()
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        ptr = hex(node.node_ptr())
        if ptr in names:
            continue
        names[ptr] = node.name()
        for nxt in node.next_functions:
            if nxt is not None:
                edges[(ptr, hex(nxt.node_ptr()))] += 1
                stack.append(nxt)
    return names, edges


def drawn(svg: Path, kind: str) -> set[str]:
    """Ids of the SVG's Graphviz nodes or clusters ("pvw-n3", "pvw-g2-cluster")."""
    groups = ET.parse(svg).getroot().iter(f"{SVG}g")
    return {g.get("id", "") for g in groups if kind in (g.get("class") or "").split()}


def arrows(svg: Path) -> set[tuple[str, ...]]:
    """(tail, head) of each drawn edge, from the titles Graphviz gives them ("n3->n5")."""
    groups = ET.parse(svg).getroot().iter(f"{SVG}g")
    edges = [g for g in groups if "edge" in (g.get("class") or "").split()]
    return {tuple((g.findtext(f"{SVG}title") or "").split("->")) for g in edges}


def expected(payload: dict, expanded: set[str]) -> tuple[set[str], set[str]]:
    """What a view with these groups open draws, read from the document by tests/fixtures."""
    graph = nested(payload)
    nodes = {f"pvw-{v}" for v in visible_nodes(graph, expanded)}
    return nodes, {f"pvw-{c}-cluster" for c in visible_clusters(graph, expanded)}


def structure(doc: dict) -> tuple[dict[str, str], collections.Counter]:
    ptr = {n["id"]: n["ptr"] for n in doc["nodes"]}
    edges = collections.Counter((ptr[e["source"]], ptr[e["target"]]) for e in doc["edges"])
    return {n["ptr"]: n["name"] for n in doc["nodes"]}, edges


@pytest.fixture(scope="module")
def trained():
    """LeNet trained 3 steps inside trace(): the last step's graph document and the oracle."""
    paddle.seed(0)
    model = LeNet()
    opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
    with trace(model):
        for batch in (2, 3, 4):
            loss = model(paddle.randn([batch, 3, 32, 32])).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
        payload = build_graph(loss)
    return payload, walk(loss)


def test_json_is_the_graph_document(trained, tmp_path):
    payload, oracle = trained
    written = save_graph(payload, tmp_path / "graph.json")
    assert written == tmp_path / "graph.json"
    doc = json.loads(written.read_text())
    assert doc == payload
    assert structure(doc) == oracle
    assert len(doc["nodes"]) == len(oracle[0]) > 20


def test_html_holds_the_document_and_fetches_nothing(trained, tmp_path):
    payload, _ = trained
    text = save_graph(payload, tmp_path / "graph.HTML").read_text()
    data = re.search(f'<script type="application/json" id="{GRAPH_ID}">(.*?)</script>', text, re.S)
    assert data and json.loads(data.group(1)) == payload
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*\b(src|href)=", text, re.I)
    urls = set(re.findall(r"(?:https?:)?//[\w.-]+\.\w+[^\s\"'<>)\\]*", text))
    # XML namespace names and the SVG DTD's identifier are names, never fetched.
    assert {u for u in urls if not u.startswith("http://www.w3.org/")} == set()


def test_unknown_suffix_names_the_supported_ones(trained, tmp_path):
    payload, _ = trained
    with pytest.raises(ValueError, match=r"\.json, \.dot, \.svg, \.png, \.html"):
        save_graph(payload, tmp_path / "graph.pdf")
    with pytest.raises(FileNotFoundError, match="create it first"):
        save_graph(payload, tmp_path / "missing" / "graph.json")
    with pytest.raises(TypeError, match="build_graph"):
        save_graph([payload], tmp_path / "graph.json")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_a_failed_save_leaves_the_old_file_and_no_temporary(trained, tmp_path):
    payload, _ = trained
    target = tmp_path / "graph.json"
    save_graph(payload, target)
    before = target.read_bytes()
    broken = {**payload, "meta": {**payload["meta"], "bad": float("nan")}}
    with pytest.raises(ValueError):
        save_graph(broken, target)
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(IsADirectoryError, match="it is a directory"):
        save_graph(payload, tmp_path / "folder.json")
    assert target.read_bytes() == before
    assert sorted(p.name for p in Path(tmp_path).iterdir()) == ["folder.json", "graph.json"]
    assert list((tmp_path / "folder.json").iterdir()) == []


def test_svg_draws_the_view_asked_for(trained, tmp_path):
    payload, oracle = trained
    graph = nested(payload)
    every = [g["id"] for g in graph["groups"]]
    svg = save_graph(payload, tmp_path / "all.svg", expanded=every)
    assert (drawn(svg, "node"), drawn(svg, "cluster")) == expected(payload, set(every))
    assert len(drawn(svg, "node")) == len(oracle[0])  # every GradNode, as Paddle's walk has it
    for depth in (0, 1):
        svg = save_graph(payload, tmp_path / f"depth{depth}.svg", depth=depth)
        wanted = expected(payload, set(to_depth(graph, depth)))
        assert (drawn(svg, "node"), drawn(svg, "cluster")) == wanted
    assert len(drawn(tmp_path / "depth0.svg", "node")) < len(oracle[0])


def test_png_is_a_picture(trained, tmp_path):
    payload, _ = trained
    data = save_graph(payload, tmp_path / "graph.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 50 and height > 50


def test_png_has_twice_the_pixels_of_the_svgs_css_size(trained, tmp_path):
    """As the page's PNG button: sharp on a 2x screen. It was Graphviz's 96 dpi, one pixel per
    CSS pixel, half the button's (blurred on a 2x screen or a slide)."""
    payload, _ = trained
    data = save_graph(payload, tmp_path / "graph.png").read_bytes()
    root = ET.parse(save_graph(payload, tmp_path / "graph.svg")).getroot()
    # The oracle: the SVG's own size in points (1 pt = 4/3 CSS px), from its viewBox.
    points = [float(v) for v in (root.get("viewBox") or "").split()[2:]]
    css = [round(p * 4 / 3) for p in points]
    assert list(struct.unpack(">II", data[16:24])) == pytest.approx([2 * c for c in css], abs=2)


def test_dot_is_graphviz_source_with_the_options(trained, tmp_path):
    payload, _ = trained
    options = {"rankdir": "LR", "edgeLabels": True}
    dot = save_graph(payload, tmp_path / "graph.dot", options=options)
    canon = subprocess.run(["dot", "-Tcanon", str(dot)], capture_output=True, text=True)
    assert canon.returncode == 0, canon.stderr
    assert "rankdir=LR" in canon.stdout
    plain = save_graph(payload, tmp_path / "plain.dot").read_text()
    assert "rankdir=TB" in plain and plain.count("label=") < dot.read_text().count("label=")


def test_widget_save_before_it_is_shown_writes_the_view_it_will_open_on(tmp_path):
    paddle.seed(1)
    model = LeNet()
    with trace(model):
        loss = model(paddle.randn([2, 3, 32, 32])).mean()
        loss.backward()
    w = GraphWidget(loss, depth=1)
    conv0 = next(g["id"] for g in w.graph["groups"] if g.get("name") == "conv.0")
    w.expand("conv.0")
    assert json.loads(w.save(tmp_path / "w.json").read_text()) == w.graph
    svg = w.save(tmp_path / "w.svg")
    graph = nested(w.graph)
    opened = set(to_depth(graph, 1)) | set(chain(graph, conv0))
    assert (drawn(svg, "node"), drawn(svg, "cluster")) == expected(w.graph, opened)
    w.view = "forward"  # read forward: every drawn edge turned round, the same nodes
    backward_edges = drawn(svg, "edge")
    forward = w.save(tmp_path / "forward.svg")
    assert drawn(forward, "node") == drawn(svg, "node")
    assert drawn(forward, "edge") == backward_edges
    assert arrows(forward) == {(b, a) for a, b in arrows(svg)}


@requires_post_hooks
def test_widget_save_colours_the_step_the_page_shows(tmp_path):
    paddle.seed(2)
    model = LeNet()
    opt = paddle.optimizer.SGD(0.5, parameters=model.parameters())
    with trace(model, stats=True, steps=3):
        for batch in (1, 2, 3, 4):
            loss = model(paddle.randn([batch, 3, 32, 32])).mean() * 10**batch
            loss.backward()
            opt.step()
            opt.clear_grad()
    w = GraphWidget(loss)
    # As once the page has drawn: it answered the kernel's request and opened these groups.
    w.expanded = [g["id"] for g in w.graph["groups"]]
    w._resolved = [w._request["id"], len(w._request.get("edits", []))]
    kept = w.graph["meta"]["steps"]["index"]
    by_step = {
        k: save_graph(
            w.graph,
            tmp_path / f"{k}.dot",
            expanded=w.expanded,
            options={"step": k, "gradColour": True},
        )  # fmt: skip
        for k in range(len(kept))
    }
    assert len({p.read_text() for p in by_step.values()}) == len(kept) == 3  # colours differ
    for position in range(len(kept)):
        # What the page writes (js/view_options.ts): the slider's position in meta.steps.index.
        w._view_options = {"rankdir": "TB", "edgeLabels": False, "gradColour": True,
                           "step": position}  # fmt: skip
        assert w.save(tmp_path / "w.dot").read_text() == by_step[position].read_text()
