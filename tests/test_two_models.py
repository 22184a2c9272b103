"""Two models in one graph (a GAN's generator and discriminator): every parameter is named,
the second model's after the variable that holds it, and each name is on the right tensor
(its edge's statistics equal that tensor's own ``.grad``)."""

from __future__ import annotations

import numpy as np
import paddle
import paddle.nn as nn
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph.model import decode


def _pair() -> tuple[nn.Layer, nn.Layer]:
    paddle.seed(7)
    g = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
    d = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
    return g, d


def _param_nodes(doc: dict) -> dict[str, tuple[str, tuple[int, ...]]]:
    graph = decode(doc)
    return {n.param.name: (n.id, n.param.shape) for n in graph.nodes if n.param is not None}


def _norm_into(doc: dict, node_id: str) -> float:
    (edge,) = [e for e in decode(doc).edges if e.target == node_id]
    assert edge.stats is not None
    return edge.stats.norm


EXPECTED = {
    "0.weight", "0.bias", "2.weight", "2.bias",
    "D.0.weight", "D.0.bias", "D.2.weight", "D.2.bias",
}  # fmt: skip


@requires_post_hooks  # the oracle: each edge's statistics
@pytest.mark.parametrize("traced", ["generator", "nothing"])
def test_the_second_models_parameters_are_named_after_its_variable(traced):
    G, D = _pair()
    z = paddle.randn([3, 4])
    with trace(G if traced == "generator" else None, stats=True):
        loss = D(G(z)).mean()
        loss.backward()
    doc = build_graph(loss)
    params = _param_nodes(doc)
    assert set(params) == EXPECTED
    owners = {**dict(G.named_parameters()), **{f"D.{k}": v for k, v in D.named_parameters()}}
    for name, (node_id, shape) in params.items():
        tensor = owners[name]
        assert shape == tuple(tensor.shape), name
        want = float(np.linalg.norm(tensor.grad.numpy().astype(np.float64)))
        assert _norm_into(doc, node_id) == pytest.approx(want, rel=1e-5), name


def test_a_graph_built_without_trace_names_both_models():
    G, D = _pair()
    loss = D(G(paddle.randn([3, 4]))).mean()
    doc = build_graph(loss)  # the graph is alive: names and a replay, no trace()
    params = _param_nodes(doc)
    assert set(params) == EXPECTED
    assert params["D.0.weight"][1] == (4, 6)


class _Trainer:  # holds both models: no variable of the caller is a Layer
    def __init__(self) -> None:
        self.g, self.d = _pair()


def test_models_no_variable_holds_are_named_after_their_class_and_stay_apart():
    trainer = _Trainer()
    critic = nn.Sequential(nn.Linear(1, 1))
    with trace(trainer.g):
        loss = (critic(trainer.d(trainer.g(paddle.randn([3, 4])))) ** 2).mean()
        loss.backward()
    names = set(_param_nodes(build_graph(loss)))
    assert {"0.weight", "2.bias", "critic.0.weight", "critic.0.bias"} <= names
    others = names - {
        "0.weight",
        "0.bias",
        "2.weight",
        "2.bias",
        "critic.0.weight",
        "critic.0.bias",
    }
    assert others == {
        "Sequential.0.weight",
        "Sequential.0.bias",
        "Sequential.2.weight",
        "Sequential.2.bias",
    }
    del trainer
