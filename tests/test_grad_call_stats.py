"""trace(stats=True) around ``paddle.grad``: what it reports of a call that computes only the
gradients of its ``inputs``, against the gradients the call itself returned."""

from __future__ import annotations

import numpy as np
import paddle
import paddle.nn as nn
import pytest
from paddle_versions import HAS_DUMP, requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import nested_dict

pytestmark = requires_post_hooks


def _model() -> nn.Layer:
    paddle.seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))


def _edges_into(doc: dict, name: str) -> list[dict]:
    nested = nested_dict(doc)
    (node,) = [n for n in nested["nodes"] if (n.get("param") or {}).get("name") == name]
    return [e for e in nested["edges"] if e["target"] == node["id"]]


def _edges_into_unnamed(doc: dict, params: set[str]) -> list[dict]:
    """The edges into the one leaf node that is not a model parameter's."""
    nested = nested_dict(doc)
    (node,) = [
        n
        for n in nested["nodes"]
        if n["kind"] == "param" and (n.get("param") or {}).get("name") not in params
    ]
    return [e for e in nested["edges"] if e["target"] == node["id"]]


def test_parameters_paddle_grad_was_not_asked_for_are_no_problem():
    """paddle.grad(y, [x]) (a gradient penalty's first step, an input saliency map) sends the
    parameters nothing by design; problems() said of each "no gradient reached it in this
    backward" and the page badged it."""
    model = _model()
    x = paddle.randn([3, 6])
    x.stop_gradient = False
    with trace(model, stats=True):
        y = model(x)
        (gx,) = paddle.grad([y], [x])
    doc = build_graph(y)
    assert doc["meta"].get("problems", []) == [], doc["meta"]["problems"]
    assert not any(n.get("grad_status") for n in nested_dict(doc)["nodes"])
    # the gradient it did compute is on its edge, as the call returned it (x is named "x"
    # where a replay reads the caller's names, Paddle >= 3.3; before, its node is unnamed)
    names = {name for name, _ in model.named_parameters()}
    (edge,) = _edges_into(doc, "x") if HAS_DUMP else _edges_into_unnamed(doc, names)
    expected = np.linalg.norm(gx.numpy().astype(np.float64))
    assert edge["stats"]["norm"] == pytest.approx(expected, rel=1e-6)


def test_a_parameter_paddle_grad_was_asked_for_gets_its_gradient():
    model = _model()
    weight = model[0].weight
    with trace(model, stats=True):
        y = model(paddle.randn([3, 6]))
        (gw,) = paddle.grad([y], [weight])
    doc = build_graph(y)
    assert doc["meta"].get("problems", []) == [], doc["meta"]["problems"]
    (edge,) = _edges_into(doc, "0.weight")
    expected = np.linalg.norm(gw.numpy().astype(np.float64))
    assert edge["stats"]["norm"] == pytest.approx(expected, rel=1e-6)
