"""param_infos_by_ptr and grad_node_of against real Paddle models."""

from __future__ import annotations

import sys

import numpy as np
import paddle
import paddle.nn as nn
import pytest

from paddleviz_widget.graph.model import ParamInfo
from paddleviz_widget.tracer.capture.anchors import has_graph
from paddleviz_widget.tracer.read import grad_node as grad_node_mod
from paddleviz_widget.tracer.read.grad_node import grad_node_of, has_grad_node
from paddleviz_widget.tracer.read.params import accumulation_ptr, param_infos_by_ptr
from paddleviz_widget.tracer.read.walk import walk_backward_graph


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.out = nn.Linear(3, 3)
        self.gain = self.create_parameter([3], dtype="float64")

    def forward(self, x):
        return self.out(self.fc(x)) * self.gain.astype("float32")


class Tied(nn.Layer):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.dec = nn.Linear(4, 4)
        self.dec.weight = self.enc.weight

    def forward(self, x):
        return self.dec(self.enc(x))


def accumulation_nodes(y) -> dict[int, str]:
    walked = walk_backward_graph([grad_node_of(y)])
    return {n.ptr: n.name for n in walked.nodes if n.is_accumulation}


def test_model_parameters_name_the_graphs_accumulation_nodes():
    model = Net()
    y = model(paddle.randn([2, 4]))
    infos = param_infos_by_ptr(model)
    assert set(infos) == set(accumulation_nodes(y))  # the input has stop_gradient=True
    by_name = dict(model.named_parameters())
    assert sorted(i.name for i in infos.values()) == sorted(by_name)
    for ptr, info in infos.items():
        param = by_name[info.name]
        assert accumulation_ptr(param) == ptr
        assert info == ParamInfo(info.name, tuple(param.shape), str(param.dtype).split(".")[-1])
    assert {i.dtype for i in infos.values()} == {"float32", "float64"}


def test_accumulation_ptr_is_stable_across_forwards_and_backward():
    model = Net()
    before = param_infos_by_ptr(model)
    for _ in range(2):
        y = model(paddle.randn([2, 4]))
        y.sum().backward()
        assert set(accumulation_nodes(y)) == set(before)
    assert param_infos_by_ptr(model) == before


def test_tied_parameter_is_named_after_its_first_owner():
    model = Tied()
    infos = param_infos_by_ptr(model)
    assert infos[accumulation_ptr(model.dec.weight)].name == "enc.weight"
    assert len(infos) == 3


def test_frozen_parameters_are_skipped():
    model = Net()
    model.fc[0].weight.stop_gradient = True
    y = model(paddle.randn([2, 4]))
    names = {i.name for i in param_infos_by_ptr(model).values()}
    assert "fc.0.weight" not in names and "fc.0.bias" in names
    assert set(param_infos_by_ptr(model)) == set(accumulation_nodes(y))


def test_params_mapping_pairs_and_generator_agree_with_model():
    model = Net()
    expected = param_infos_by_ptr(model)
    assert param_infos_by_ptr(params=dict(model.named_parameters())) == expected
    assert param_infos_by_ptr(params=list(model.named_parameters())) == expected
    assert param_infos_by_ptr(params=model.named_parameters()) == expected


def test_params_names_win_and_leaf_tensors_are_named():
    model = Net()
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    hidden = model.fc(x)  # not a leaf: has no accumulation node, so it is not named
    infos = param_infos_by_ptr(model, params={"input": x, "W": model.out.weight, "hidden": hidden})
    assert infos[accumulation_ptr(x)] == ParamInfo("input", (2, 4), "float32")
    assert infos[accumulation_ptr(model.out.weight)].name == "W"
    assert "hidden" not in {i.name for i in infos.values()}
    y = model(x)
    assert set(accumulation_nodes(y)) <= set(infos)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "model=<nn.Layer> or params="),
        ({"model": "net"}, "must be a paddle.nn.Layer, got a str"),
        ({"model": {"w": 1}}, "must be a paddle.nn.Layer, got a dict"),
        ({"params": {"w": np.zeros(3)}}, r"params\['w'\] is a ndarray, not a paddle.Tensor"),
        ({"params": [paddle.zeros([1])]}, "not a \\(name, Tensor\\) pair"),
        ({"params": paddle.zeros([1])}, "single paddle.Tensor.*params=\\{'x': x\\}"),
        ({"params": 5}, "params got a int"),
        ({"params": {3: paddle.zeros([1])}}, "not a str"),
    ],
)
def test_bad_input_names_the_fix(kwargs, message):
    with pytest.raises(TypeError, match=message):
        param_infos_by_ptr(**kwargs)


def test_grad_node_of_does_not_leak_the_node():
    x = paddle.randn([3])
    x.stop_gradient = False
    y = paddle.tanh(x)
    node = grad_node_of(y)
    refs = sys.getrefcount(node)
    for _ in range(10):
        assert grad_node_of(y) is node
    assert sys.getrefcount(node) == refs
    # What it compensates for: Paddle's own getter, measured the same way.
    for _ in range(10):
        y.grad_fn  # noqa: B018
    leaked = sys.getrefcount(node) - refs
    assert leaked == 10 * grad_node_mod._leak_per_access
    assert grad_node_of(paddle.randn([2])) is None  # stop_gradient tensor: no node


def test_has_grad_node_says_what_grad_fn_does_and_leaks_nothing():
    """The session's check before every backward: is_leaf first (no getter leak), grad_fn
    for a leaf. Each kind of root a backward may get, against Paddle's own grad_fn."""
    w = paddle.create_parameter([3], "float32")  # a leaf with an accumulation node
    x = paddle.randn([3])
    x.stop_gradient = False  # a user's leaf that needs a gradient
    with paddle.no_grad():
        made_without_grad = w * 2
    y = paddle.tanh(x * w).sum()
    roots = {
        "op output": y, "parameter": w, "leaf": x, "plain": paddle.randn([3]),
        "no_grad": made_without_grad, "detached": y.detach(), "empty": paddle.Tensor(),
    }  # fmt: skip
    # (an empty Tensor: Paddle 2.6 / 3.0 give it a node object, 3.3 None; grad_fn decides)
    expected = {"op output": True, "parameter": True, "leaf": True, "plain": False,
                "no_grad": False, "detached": False}  # fmt: skip
    for name, tensor in roots.items():
        node = tensor.grad_fn
        own = node is not None
        if own and grad_node_mod._leak_per_access == 1:
            grad_node_mod._decref(node)  # (the getter's leak, as grad_node_of undoes it)
        assert has_grad_node(tensor) is own is expected.get(name, own), name
    node = grad_node_of(y)
    refs = sys.getrefcount(node)
    for _ in range(10):
        assert has_grad_node(y) and has_grad_node(w)
    assert sys.getrefcount(node) == refs
    # has_graph: the roots of one backward (one tensor first, the usual case, then lists)
    for name, tensor in roots.items():
        assert has_graph([tensor]) is has_grad_node(tensor), name
    assert has_graph([3, roots["plain"], y]) and has_graph([roots["no_grad"], w])
    assert not has_graph([]) and not has_graph([None, 3]) and not has_graph([y.detach()])
