"""GraphWidget.from_dump / build_graph_from_dump: a graph from the files Paddle writes with
``backward(dump_backward_graph_path=DIR)``, as if copied over from another machine.

Oracles, independent of the reader under test: the live graph that ``build_graph(loss)`` walks
inside ``trace(model)`` (ptrs come from the GradNodes themselves), and a few-line regex parse
of the .dot written here; call sites are checked against the model's source lines.
"""

from __future__ import annotations

import collections
import inspect
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import paddle
import pytest
from models import LeNet
from oracle_models import ptr_of, tied_and_input
from paddle_versions import requires_dump

from paddleviz_widget import GraphWidget, build_graph, trace
from paddleviz_widget.graph import nested_dict, validate_graph_dict
from paddleviz_widget.sources import build_graph_from_dump, list_dumps, load_dump_graph

HOW_TO = "run loss.backward(dump_backward_graph_path=DIR) with Paddle >= 3.3"
_NODE = re.compile(r'(node_\d+)\[label="(\w+)\\nPtr: (0x[0-9a-f]+)"')
_EDGE = re.compile(r'(node_\d+)->(node_\d+)\[label="Place\(([^)]*)\)\\n(\w+)\[([0-9, ]*)\]"\]')


def read(directory: Path) -> dict[str, Any]:
    doc = build_graph_from_dump(directory)
    validate_graph_dict(json.loads(json.dumps(doc)))
    return nested_dict(doc)


def nodes_of(graph: dict[str, Any]) -> dict[str, str]:
    return {n["ptr"]: n["name"] for n in graph["nodes"]}


def edges_of(graph: dict[str, Any]) -> collections.Counter[tuple[Any, ...]]:
    ptr = {n["id"]: n["ptr"] for n in graph["nodes"]}
    return collections.Counter(
        (
            ptr[e["source"]],
            ptr[e["target"]],
            e["grad"]["dtype"],
            tuple(e["grad"]["shape"]),
            e["grad"]["place"],
        )
        for e in graph["edges"]
    )


def by_kind(graph: dict[str, Any], kind: str) -> set[str]:
    return {n["ptr"] for n in graph["nodes"] if n["kind"] == kind}


def minimal_parse(directory: Path) -> tuple[dict[str, str], collections.Counter[tuple[Any, ...]]]:
    (dot,) = directory.glob("*_backward_graph.dot")
    text = dot.read_text()
    ids = {m[1]: (m[3], m[2]) for m in _NODE.finditer(text)}
    edges = collections.Counter(
        (ids[m[1]][0], ids[m[2]][0], m[4], tuple(int(d) for d in m[5].split(",") if d), m[3])
        for m in _EDGE.finditer(text)
    )
    assert len(edges) and sum(edges.values()) == text.count("->")
    return dict(ids.values()), edges


def traced_backward(model: paddle.nn.Layer, x: paddle.Tensor, directory: Path) -> dict[str, Any]:
    """Forward + backward inside trace(), dumping to ``directory``; the live graph."""
    with trace(model):
        loss = model(x).sum()
        loss.backward(dump_backward_graph_path=str(directory))
    return nested_dict(build_graph(loss))


def resnet18_and_input() -> tuple[paddle.nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return paddle.vision.models.resnet18(), paddle.randn([1, 3, 32, 32])


def lenet_and_input() -> tuple[paddle.nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return LeNet(), paddle.randn([1, 3, 32, 32])


@requires_dump
@pytest.mark.parametrize("make", [lenet_and_input, resnet18_and_input, tied_and_input])
def test_dump_graph_equals_the_live_graph(make, tmp_path):
    model, x = make()
    live = traced_backward(model, x, tmp_path)
    graph = read(tmp_path)

    assert nodes_of(graph) == nodes_of(live)
    assert edges_of(graph) == edges_of(live)
    assert by_kind(graph, "param") == by_kind(live, "param")
    assert by_kind(graph, "output") == by_kind(live, "output")
    assert [o["node"] for o in graph["meta"]["outputs"]] == [
        n["id"] for n in graph["nodes"] if n["kind"] == "output"
    ]
    assert graph["meta"]["source"] == "paddle_dump"
    # ids are breadth-first from the output, like the tracer's
    assert graph["nodes"][0]["kind"] == "output" and graph["nodes"][0]["id"] == "n0"


@requires_dump
def test_a_weight_used_twice_gets_two_gradients(tmp_path):
    model, ids = tied_and_input()
    loss = model(ids).sum()
    loss.backward(dump_backward_graph_path=str(tmp_path))
    graph = read(tmp_path)
    nodes, edges = minimal_parse(tmp_path)

    assert nodes_of(graph) == nodes
    assert edges_of(graph) == edges
    node = next(n for n in graph["nodes"] if n["ptr"] == ptr_of(model.emb.weight))
    assert node["kind"] == "param" and node["name"] == "GradNodeAccumulation"
    into = [e for e in graph["edges"] if e["target"] == node["id"]]
    assert all(e["grad"]["shape"] == list(model.emb.weight.shape) for e in into)
    count, sources = len(into), {e["source"] for e in into}
    assert count == len(sources) == 2  # the lookup and the output projection


@requires_dump
def test_call_sites_come_from_the_call_stack_log(tmp_path):
    old = paddle.get_flags(["FLAGS_call_stack_level"])
    paddle.set_flags({"FLAGS_call_stack_level": 3})
    try:
        model, x = lenet_and_input()
        model(x).sum().backward(dump_backward_graph_path=str(tmp_path))
    finally:
        paddle.set_flags(old)
    graph = read(tmp_path)

    lines, first = inspect.getsourcelines(LeNet.forward)
    conv_line = first + next(k for k, t in enumerate(lines) if "self.conv(" in t)
    fc_line = first + next(k for k, t in enumerate(lines) if "self.fc(" in t)
    models_py = inspect.getsourcefile(LeNet)
    sites = collections.Counter(
        (n["name"], n["call_site"]["line"])
        for n in graph["nodes"]
        if n["call_site"] and n["call_site"]["file"] == models_py
    )
    assert sites[("MatmulGradNode", fc_line)] == 3  # three Linear layers, called in self.fc(...)
    assert sites[("SigmoidGradNode", conv_line)] == 2
    assert sites[("SigmoidGradNode", fc_line)] == 2
    assert all(n["call_site"]["function"] for n in graph["nodes"] if n["call_site"])
    assert "call_stack" in graph["meta"]["annotations"]
    assert "notice" not in graph["meta"]


@requires_dump
def test_a_dump_without_stacks_says_how_to_get_them(tmp_path):
    model, x = lenet_and_input()
    model(x).sum().backward(dump_backward_graph_path=str(tmp_path))
    graph = read(tmp_path)
    assert all(n["call_site"] is None for n in graph["nodes"])
    assert "FLAGS_call_stack_level=3" in graph["meta"]["notice"]
    assert graph["meta"]["annotations"] == ["dump"]


def two_dumps(directory: Path) -> tuple[dict[str, str], dict[str, str]]:
    """LeNet's backward, then the tied model's, into one directory: (old nodes, new nodes)."""
    model, x = lenet_and_input()
    model(x).sum().backward(dump_backward_graph_path=str(directory))
    old = minimal_parse_newest(directory)
    tied, ids = tied_and_input()
    tied(ids).sum().backward(dump_backward_graph_path=str(directory))
    return old, minimal_parse_newest(directory)


def minimal_parse_newest(directory: Path) -> dict[str, str]:
    newest = max(directory.glob("*_backward_graph.dot"), key=lambda p: p.name)
    return {m[3]: m[2] for m in _NODE.finditer(newest.read_text())}


@requires_dump
def test_several_dumps_take_the_newest_and_say_so(tmp_path):
    old, new = two_dumps(tmp_path)
    dumps = list_dumps(tmp_path)
    assert len(dumps) == 2 and old != new

    graph = read(tmp_path)
    assert nodes_of(graph) == new
    assert "holds 2 dumps" in graph["meta"]["notice"] and dumps[1].prefix in graph["meta"]["notice"]
    assert graph["meta"]["dump"]["prefix"] == dumps[1].prefix

    picked = nested_dict(build_graph_from_dump(tmp_path, which=dumps[0].prefix))
    assert nodes_of(picked) == old and "holds" not in picked["meta"]["notice"]
    by_file = nested_dict(build_graph_from_dump(dumps[0].forward or tmp_path))
    assert nodes_of(by_file) == old  # any file of a dump picks that dump
    with pytest.raises(ValueError, match=re.escape(dumps[0].prefix)):
        build_graph_from_dump(tmp_path, which="2001-01-01_00:00:00.000000")


@requires_dump
def test_newest_is_by_paddles_timestamp_even_when_a_copy_reset_the_mtimes(tmp_path):
    _, new = two_dumps(tmp_path / "run")
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "run", copy)
    for k, path in enumerate(sorted(copy.iterdir(), reverse=True)):
        os.utime(path, (1_000_000 + k, 1_000_000 + k))  # newest file now has the oldest mtime
    assert nodes_of(read(copy)) == new


@requires_dump
def test_the_widget_reads_a_dump(tmp_path):
    model, x = lenet_and_input()
    model(x).sum().backward(dump_backward_graph_path=str(tmp_path))
    w = GraphWidget.from_dump(tmp_path, height=500, depth=0)
    assert w.graph == build_graph_from_dump(tmp_path)
    assert w.height == "500px" and w.depth == 0
    assert len(w.graph["nodes"]) == len(minimal_parse(tmp_path)[0])


def test_errors_name_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="dump_backward_graph_path"):
        load_dump_graph(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match=re.escape(HOW_TO)):
        load_dump_graph(tmp_path)  # exists, holds no dump
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.raises(ValueError, match="not a Paddle backward dump file"):
        load_dump_graph(other)
    lonely = tmp_path / "x_call_stack.log"
    lonely.write_text("")
    with pytest.raises(FileNotFoundError, match="x_backward_graph.dot"):
        load_dump_graph(lonely)


def broken_copy(tmp_path: Path, edit: Any) -> Path:
    model, x = lenet_and_input()
    model(x).sum().backward(dump_backward_graph_path=str(tmp_path / "ok"))
    (dot,) = (tmp_path / "ok").glob("*_backward_graph.dot")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / dot.name).write_text(edit(dot.read_text()))
    return bad


@requires_dump
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: "<html>not a graph</html>", "not a Graphviz digraph"),
        (lambda t: t[: len(t) // 2], "cut short"),
        (lambda t: t.replace("Ptr: 0x", "Pointer: 0x", 1), "1 of 30 node lines"),
        (lambda t: t.replace("->node_", "->nod_", 2), "2 of 29 edge lines"),
        (lambda t: "digraph G {\n}\n" if t else "", None),
    ],
)
def test_unreadable_dot_files_are_named(tmp_path, edit, message):
    bad = broken_copy(tmp_path, edit)
    if message is None:  # an empty but complete digraph is an empty graph, not an error
        assert load_dump_graph(bad).nodes == ()
        return
    (dot,) = bad.iterdir()
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        load_dump_graph(bad)
    assert dot.name in str(err.value)
