"""A float64 gradient whose finite elements are near 1e308 (a float64 model exploding): its L2
norm (and mean |g|, from their sum) is past float64's range. The edge got norm Infinity, which
no JSON carries: the page refused the whole graph (orjson writes it as null: "stats is not
[norm, ...]"), save(".json"/".html") raised, the static picture was unavailable. An edge's
numbers are right or absent: it shows no statistics and says why, and its parameter is not
called "no gradient reached it". Oracle: the gradient Paddle hands a tensor hook (each
element 1.5e308: finite, so no NaN/Inf either)."""

from __future__ import annotations

import json

import numpy as np
import paddle
from paddle_versions import requires_post_hooks

from paddleviz_widget import GraphWidget, build_graph, trace
from paddleviz_widget.graph import Graph

pytestmark = requires_post_hooks


class Exploding(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.w = self.create_parameter([4], dtype="float64")

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return (self.w * 1.5e308).sum() + (x * 2.0).sum()


def test_a_norm_past_float64_is_absent_with_its_reason_and_the_graph_stays_readable(tmp_path):
    model = Exploding()
    x = paddle.ones([4], "float64")
    x.stop_gradient = False
    with trace(model, stats=True):
        loss = model(x)
        loss.backward()
    g = model.w.grad.numpy()
    assert np.isfinite(g).all() and (g == 1.5e308).all()  # finite: no NaN/Inf either
    with np.errstate(over="ignore"):  # its norm, 3e308, is past float64's range
        assert not np.isfinite(np.sqrt(np.sum(np.square(g / 1e300))) * 1e300)

    doc = build_graph(loss)
    json.dumps(doc, allow_nan=False)  # raised ValueError: Infinity in an edge's stats
    graph = Graph.from_dict(doc)
    nodes = {n.id: n for n in graph.nodes}
    leaves = {e.target for e in graph.edges if nodes[e.target].kind == "param"}
    into = {(nodes[e.target].param.name if nodes[e.target].param else "x"): e
            for e in graph.edges if e.target in leaves}  # fmt: skip
    assert into["w"].stats is None
    assert "past float64's range" in (into["w"].no_stats or "")
    assert "1.5e+308" in (into["w"].no_stats or "")
    assert nodes[into["w"].target].grad_status is None  # its gradient came: not "none"
    # the other edges keep their numbers: x's gradient is 2 everywhere (x.grad, the oracle)
    assert into["x"].stats is not None
    assert into["x"].stats.norm == float(np.sqrt(np.sum(np.square(x.grad.numpy()))))
    assert into["x"].stats.max_abs == 2.0

    widget = GraphWidget(loss)
    assert not [p for p in widget.problems() if p.kind == "none"]
    widget.save(tmp_path / "g.json")  # raised: allow_nan=False met Infinity
    assert "past float64" in (tmp_path / "g.json").read_text()
