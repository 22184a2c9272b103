"""The seed paddleviz API still works: make_graph(y, dpi) -> graphviz.Digraph (issue 3)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import graphviz
import paddle
import pytest
from graph_dicts import nested_graph
from models import LeNet, lenet_output
from paddle_versions import requires_dump, requires_paddle_33

from paddleviz_widget import make_graph, trace

# The checkout under test first: the scripts' subprocesses must not import an installed copy.
REPO = Path(__file__).resolve().parents[1]


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

    graph = nested_graph(y)
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


@requires_paddle_33
def test_traced_edges_are_labelled_dtype_place_shape():
    model, _ = lenet_output()
    with trace(model):
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward()
    graph = nested_graph(y)
    _, edges = _statements(make_graph(y))
    by_pair = {(e["target"], e["source"]): e["grad"] for e in graph["edges"]}
    assert len(edges) == len(graph["edges"])
    for target, source, label in edges:
        grad = by_pair[(target, source)]
        assert label == f"{grad['dtype']}\\n{grad['place']}\\n{grad['shape']}"


SEED_EXAMPLE = """
import paddle
from models import LeNet
from paddleviz_widget import make_graph

model = LeNet()
y = model(paddle.randn([1, 3, 32, 32]))
y.sum().backward()
dot = make_graph(y, dpi="72")
dot.render("viz-result.gv", format="png", view=False)
"""


def _run_module(script: Path, monkeypatch: pytest.MonkeyPatch) -> subprocess.CompletedProcess:
    """`python -m paddleviz_widget.run script` in the script's folder, this checkout first on
    the path (not an installed copy)."""
    monkeypatch.chdir(script.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(Path(__file__).parent)])}
    return subprocess.run(
        [sys.executable, "-m", "paddleviz_widget.run", str(script)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@requires_paddle_33
def test_run_module_traces_a_seed_style_script(tmp_path, monkeypatch):
    """The seed's `python paddleviz/run.py example.py`, as `-m paddleviz_widget.run`."""
    script = tmp_path / "example.py"
    script.write_text(SEED_EXAMPLE)
    done = _run_module(script, monkeypatch)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "viz-result.gv.png").read_bytes()[:4] == b"\x89PNG"
    source = (tmp_path / "viz-result.gv").read_text()
    assert "float32\\ncpu\\n[1, 10]" in source  # annotated without GLOG_v
    assert "gradnode_ptr" not in done.stderr and "begin run" not in done.stderr


def test_run_module_reports_a_failing_script_as_python_would(tmp_path, monkeypatch):
    """`python example.py`'s traceback (the script's frames only) and exit status."""
    script = tmp_path / "example.py"
    script.write_text(SEED_EXAMPLE.replace('dot = make_graph(y, dpi="72")', "1 / 0"))
    done = _run_module(script, monkeypatch)
    assert done.returncode == 1
    trace = done.stderr[done.stderr.index("Traceback (most recent call last):") :]
    assert trace.splitlines()[1].startswith(f'  File "{script}", line ')
    assert "ZeroDivisionError: division by zero" in trace
    assert "paddleviz_widget" not in trace and "runpy" not in trace


def _svg_text(dot: graphviz.Digraph) -> str:
    """The words the rendered picture shows (Graphviz's SVG text elements, joined)."""
    svg = dot.pipe(format="svg").decode()
    words = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    return " ".join(" ".join(words).split()).replace("&#45;", "-")


def test_make_graph_says_under_the_picture_why_labels_are_missing():
    # A recompute'd layer: its gradient shapes are not replayed and its inner nodes are hidden
    # in one PyLayer node. The widget says both in its notice line; the seed's picture must
    # say it too, not show "?" places and one opaque node without a word.
    from paddle.distributed.fleet.utils import recompute

    paddle.seed(0)
    layer = paddle.nn.Linear(4, 4)
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    shown = _svg_text(make_graph(recompute(layer, x).sum(), dpi="72"))
    assert "PyLayer nodes (RecomputeFunction)" in shown
    assert "Recompute hides the GradNodes of 1 layer(s)" in shown


# Untraced, edges are labelled by a replay of the backward (its dump: 3.3); on 2.6 and 3.0 the
# caption then rightly says they are not. Traced, every version labels every edge.
@pytest.mark.parametrize("traced", [pytest.param(False, marks=requires_dump), True],
                         ids=["untraced", "traced"])  # fmt: skip
def test_make_graph_of_a_fully_labelled_graph_has_no_caption(traced):
    if traced:
        paddle.seed(0)
        model = LeNet()
        with trace(model):
            y = model(paddle.randn([1, 3, 32, 32]))
            y.sum().backward()
    else:
        _, y = lenet_output()
    dot = make_graph(y, dpi="72")
    assert not any(line.strip().startswith("label=") for line in dot.body)
    assert "labelloc" not in dot.source
