"""annotated_graph fills each Node and Edge in without the frozen __init__: every field is
there and the value is the one the dataclass constructor makes (equal, hashable, frozen).
build_graph encodes annotated_rows' columns without those objects: the same document as the
Graph's, on a hand-made graph and on a real traced one."""

from __future__ import annotations

import dataclasses

import pytest

from paddleviz_widget.graph.codec import encode_parts, encode_rows
from paddleviz_widget.graph.parts import (
    CallSite,
    Edge,
    GradInfo,
    GraphParts,
    Node,
    ParamInfo,
    Slot,
    rows_of,
)  # fmt: skip
from paddleviz_widget.tracer.merge.annotate import Annotations, EdgeNote, NodeSlots
from paddleviz_widget.tracer.merge.graph_rows import annotated_graph, annotated_rows
from paddleviz_widget.tracer.read.walk import WalkedEdge, WalkedNode, WalkResult


def _graph() -> tuple[WalkResult, Annotations]:
    walk = WalkResult(
        nodes=(
            WalkedNode(0, "matmul_grad", 0x10, True, 2),
            WalkedNode(1, "GradNodeAccumulation", 0x20, False, 0),
            WalkedNode(2, "relu_grad", 0x30, False, 1),
        ),
        edges=(WalkedEdge(0, 1, 0), WalkedEdge(0, 2, 1)),
        root_indices=(0,),
    )
    grad = GradInfo("float32", (2, 3))
    ann = Annotations(
        edges={(0x10, 0): EdgeNote(grad, "grad_x", "l")},
        slots={0x10: NodeSlots((Slot("out", "@Grad", grad),), (Slot("grad_x", None, grad),))},
        group_of_ptr={0x10: "g0"},
        params={0x20: ParamInfo("fc.weight", (2, 3), "float32")},
        call_sites={0x30: CallSite("model.py", 3, "forward")},
        grad_status={0x20: "zero"},
    )
    return walk, ann


def test_nodes_and_edges_equal_the_constructed_ones() -> None:
    walk, ann = _graph()
    graph = annotated_graph(walk, ann, {0: GradInfo("float32", (1,))})
    for part, cls in [*((n, Node) for n in graph.nodes), *((e, Edge) for e in graph.edges)]:
        names = [f.name for f in dataclasses.fields(cls)]
        assert list(vars(part)) == names  # every field, in order
        made = cls(**vars(part))
        assert part == made and hash(part) == hash(made) and repr(part) == repr(made)
        with pytest.raises(dataclasses.FrozenInstanceError):
            part.id = "other"  # type: ignore[misc]
    root, param, relu = graph.nodes
    assert (root.kind, param.kind, relu.kind) == ("output", "param", "op")
    assert root.tensor == GradInfo("float32", (1,)) and root.group == "g0"
    assert param.param == ParamInfo("fc.weight", (2, 3), "float32")
    assert param.grad_status == "zero" and relu.call_site == CallSite("model.py", 3, "forward")
    first, second = graph.edges
    assert (first.source, first.target, first.index, first.slot) == ("n0", "n1", 0, "grad_x")
    assert first.grad == GradInfo("float32", (2, 3)) and second.grad is None
    assert graph.meta["sources"]["edges"] == "l."


def test_rows_encode_as_the_graph_does() -> None:
    walk, ann = _graph()
    rows = annotated_rows(walk, ann, {0: GradInfo("float32", (1,))})
    graph = annotated_graph(walk, ann, {0: GradInfo("float32", (1,))})
    parts = GraphParts(graph.nodes, graph.edges, graph.groups, graph.meta)
    assert list(rows.nodes) == list(rows_of(parts).nodes)  # iterable again, row by row
    assert list(rows.edges) == list(rows_of(parts).edges)
    assert encode_rows(rows) == encode_parts(parts) == graph.to_dict()


def test_build_graph_is_the_traced_graphs_document() -> None:
    """A real model inside trace(): build_graph (rows) and trace_graph(...).to_dict() (Node
    and Edge objects) give the same document, byte for byte once serialised."""
    import json

    import paddle

    import paddleviz_widget
    from paddleviz_widget.tracer.build import build_graph, trace_graph

    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 2))
    with paddleviz_widget.trace(model):
        y = model(paddle.randn([3, 4]))
        y.sum().backward()
    doc = build_graph(y)
    assert len(doc["nodes"]) > 5 and any("grad" in e for e in doc["edges"])
    assert json.dumps(doc) == json.dumps(trace_graph(y).to_dict())
