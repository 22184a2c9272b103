"""trace(model, stats=True) on real model code (paddle.vision's ResNet-18 with batch norm,
paddleformers' Llama, with and without its recompute schedule): every parameter's ``.grad``
is bitwise what a plain backward gives, and each parameter edge's statistics are those of
``p.grad`` (float64 NumPy), for every parameter fed by one edge (``.grad`` was empty before)
that the graph shows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import paddle
import pytest
from llama_tiny import tiny_llama
from paddle_versions import requires_paddleformers, requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import nested_dict

pytestmark = requires_post_hooks


def _resnet18() -> tuple[paddle.nn.Layer, Callable[[], Any]]:
    model = paddle.vision.models.resnet18(num_classes=10)
    image = paddle.randn([2, 3, 64, 64])
    return model, lambda: model(image).square().mean()


def _llama(
    recompute: bool, reentrant: bool = False
) -> Callable[[], tuple[paddle.nn.Layer, Callable[[], Any]]]:
    def build() -> tuple[paddle.nn.Layer, Callable[[], Any]]:
        model, ids = tiny_llama(recompute=recompute, reentrant=reentrant)
        return model, lambda: model(ids)[0].astype("float32").square().mean()

    return build


# (model, share of parameters whose edge must be in the graph): recompute hides the layers it
# reruns, parameters included (the graph says so; tests/test_recompute_visible.py).
MODELS = [
    pytest.param(_resnet18, 0.9, id="resnet18"),
    pytest.param(_llama(False), 0.9, id="llama", marks=requires_paddleformers),
    pytest.param(_llama(True), 0.0, id="llama-recompute", marks=requires_paddleformers),
    pytest.param(
        _llama(True, True), 0.0, id="llama-recompute-reentrant", marks=requires_paddleformers
    ),
]


def _grads(model: paddle.nn.Layer) -> dict[str, np.ndarray]:
    return {n: p.grad.numpy().copy() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize(("build", "share"), MODELS)
def test_stats_leave_grad_alone_and_equal_each_parameters_grad(build: Any, share: float) -> None:
    paddle.seed(0)
    model, loss = build()
    paddle.seed(1)
    loss().backward()
    plain = _grads(model)
    model.clear_gradients(set_to_zero=False)

    paddle.seed(1)
    with trace(model, stats=True):
        out = loss()
        out.backward()
    traced = _grads(model)
    assert traced.keys() == plain.keys()
    for name, grad in plain.items():
        assert np.array_equal(traced[name], grad), f"{name}: .grad changed under stats=True"

    doc = nested_dict(build_graph(out, model=model))
    nodes = {n["id"]: n for n in doc["nodes"]}
    into = Counter(e["target"] for e in doc["edges"])
    checked = 0
    for edge in doc["edges"]:
        target = nodes[edge["target"]]
        name = (target.get("param") or {}).get("name")
        if target["kind"] != "param" or name not in traced or into[edge["target"]] != 1:
            continue
        g = traced[name].astype(np.float64)
        stats = edge.get("stats")
        assert stats is not None, f"{name}: no statistics"
        assert stats["norm"] == pytest.approx(np.linalg.norm(g), rel=1e-5), name
        assert stats["max_abs"] == pytest.approx(np.abs(g).max(), rel=1e-5), name
        assert stats["mean_abs"] == pytest.approx(np.abs(g).mean(), rel=1e-5), name
        assert stats["zero_fraction"] == pytest.approx((g == 0).mean(), abs=1e-12), name
        assert stats["nan"] == stats["inf"] == 0, name
        checked += 1
    assert checked >= max(1, share * len(traced)), f"{checked} of {len(traced)} parameters checked"
