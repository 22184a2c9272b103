"""Statistics land on the right edge when a GradNode's hook gets more gradients than it has
edges (BatchNorm: 5 input slots, 3 edges), and a parameter is never called gradient-less
because its edge could not be matched."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import nested_dict
from paddleviz_widget.tracer.capture.edge_positions import edge_positions


def test_edge_positions_drop_the_uninitialized_extras():
    # BatchNorm: x, mean, variance (no edges, uninitialized), scale, bias.
    assert edge_positions([True, False, False, True, True], 3) == [0, None, None, 1, 2]
    # As many gradients as edges: position is the edge.
    assert edge_positions([True, False, True], 3) == [0, 1, 2]
    # One extra among two blanks: the gradient before both is known, one between is not.
    assert edge_positions([True, False, False], 2) == [0, None, None]
    assert edge_positions([False, True, False], 2) == [None, None, None]
    # Not enough blanks to explain the extras, or more edges than gradients: unknown.
    assert edge_positions([True, True, True], 2) == [None, None, None]
    assert edge_positions([True], 2) == [None]


class ConvBN(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.conv = paddle.nn.Conv2D(3, 4, 3)
        self.bn = paddle.nn.BatchNorm2D(4)
        self.fc = paddle.nn.Linear(4 * 6 * 6, 2)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc(paddle.nn.functional.relu(self.bn(self.conv(x))).flatten(1))


@requires_post_hooks
def test_batchnorm_parameters_get_their_own_gradients():
    paddle.seed(0)
    model = ConvBN()
    x = paddle.randn([2, 3, 8, 8])
    with trace(model, stats=True):
        y = model(x)
        y.sum().backward()
    doc = nested_dict(build_graph(y))
    by_name = {n["id"]: n for n in doc["nodes"]}
    checked = set()
    for edge in doc["edges"]:
        target = by_name[edge["target"]]
        if target["kind"] != "param":
            continue
        name = target["param"]["name"]
        grad = dict(model.named_parameters())[name].grad.numpy()
        assert edge.get("stats") is not None, f"{name}: no statistics"
        assert edge["stats"]["norm"] == pytest.approx(np.linalg.norm(grad), rel=1e-5), name
        assert edge["stats"]["max_abs"] == pytest.approx(np.abs(grad).max(), rel=1e-5), name
        assert "grad_status" not in target, f"{name} flagged {target['grad_status']}"
        checked.add(name.split(".")[0])
    assert {"bn", "conv", "fc"} <= checked


def test_edge_positions_an_edge_paddle_sends_nothing_to_settles_it():
    # where(mask, x, zeros): the mask has no edge, zeros a None one (index 1): x is edge 0.
    assert edge_positions([False, True, False], 2, absent=[1]) == [None, 0, None]
    # where(mask, zeros, y): zeros' None edge is index 0, y is edge 1.
    assert edge_positions([False, False, True], 2, absent=[0]) == [None, None, 1]
    # Nothing absent that settles it: still unknown.
    assert edge_positions([False, True, False], 2, absent=[]) == [None, None, None]


class Masked(paddle.nn.Layer):
    """paddle.where with one branch that needs no gradient, on an activation and on a
    parameter: the hook gets 3 gradients (mask, x, y) for 2 edges."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)
        self.w = self.create_parameter([5, 4])
        self.seen: dict[str, np.ndarray] = {}

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = self.fc(x)
        h.register_hook(lambda g: self.seen.__setitem__("h", g.numpy().copy()))
        kept = paddle.where(x > 0, h, paddle.zeros_like(x))
        other = paddle.where(x < 0.5, paddle.zeros_like(x), self.w)
        return (kept * 3 + other * x).sum()


@requires_post_hooks
def test_where_with_a_branch_needing_no_gradient_gets_its_statistics():
    paddle.seed(0)
    model = Masked()
    x = paddle.randn([5, 4])
    with trace(model, stats=True):
        y = model(x)
        y.backward()
    doc = nested_dict(build_graph(y))
    names = {n["id"]: n["name"] for n in doc["nodes"]}
    params = {n["id"]: n["param"]["name"] for n in doc["nodes"] if n.get("param")}
    oracle = {"h": model.seen["h"], "w": model.w.grad.numpy()}
    checked = set()
    for edge in doc["edges"]:
        if names[edge["source"]] != "WhereGradNode":
            continue
        target = params.get(edge["target"], "h")  # the other where's x is fc's output
        grad = oracle[target]
        assert edge.get("stats") is not None, f"where -> {target}: no statistics"
        assert edge["stats"]["norm"] == pytest.approx(np.linalg.norm(grad), rel=1e-5), target
        assert edge["stats"]["max_abs"] == pytest.approx(np.abs(grad).max(), rel=1e-5), target
        checked.add(target)
    assert checked == {"h", "w"}
