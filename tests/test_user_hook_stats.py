"""trace(stats=True) and a hook of the user's (``Tensor.register_hook``) that changes a gradient
between two ops: nothing is blamed on the op after the hook for what the hook did.

The statistics hooks see what each op sent; the op after a user's hook receives what the hook
returned. Before user_hooks.py, a ``g * 0`` mask made problems() say of that op "the gradient
reaching this op is non-zero but every gradient it sends is zero: the zeros start here", and a
hook dividing by zero made it "the first NaN/Inf gradient was made here from finite ones".
"""

from __future__ import annotations

import numpy as np
import paddle
import paddle.nn as nn
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import nested_dict

pytestmark = requires_post_hooks


def _traced(change) -> tuple[dict, paddle.Tensor, dict]:
    """An MLP whose tanh output has the user's hook ``change``; (document, the tanh output,
    what the hook was given: the oracle of the edge into it)."""
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    given: dict = {}
    original = paddle.Tensor.register_hook
    with trace(model, stats=True):
        t = model[1](model[0](paddle.randn([3, 6])))

        def hook(grad: paddle.Tensor) -> paddle.Tensor:
            given["grad"] = grad.numpy().astype(np.float64)
            return change(grad)

        t.register_hook(hook)
        y = model[2](t).sum()
        y.backward()
    assert paddle.Tensor.register_hook is original  # put back on exit
    raw = build_graph(y)
    given["no_stats"] = [e["no_stats"] for e in raw["edges"] if "no_stats" in e]
    return nested_dict(raw), t, given


def _edge_into(doc: dict, tensor: paddle.Tensor) -> dict:
    ptr = hex(int(tensor.grad_fn.node_ptr()))
    (node,) = [n for n in doc["nodes"] if n["ptr"] == ptr]
    (edge,) = [e for e in doc["edges"] if e["target"] == node["id"]]
    return edge


def test_a_mask_hook_is_not_blamed_on_the_op_after_it():
    doc, t, given = _traced(lambda g: g * 0.0)
    problems = doc["meta"].get("problems", [])
    assert not any(p["name"] == "TanhGradNode" for p in problems), problems
    assert not any("zeros start here" in p["reason"] for p in problems), problems
    edge = _edge_into(doc, t)  # what the sender sent (non-zero) is not what arrived: no stats
    assert edge.get("stats") is None and np.linalg.norm(given["grad"]) > 0
    (why,) = given["no_stats"]  # the edge says why (tooltip, inspector)
    assert "hook of yours" in why
    assert edge["grad"]["shape"] == [3, 8]  # its dtype and shape stay
    notices = doc["meta"].get("notices") or [doc["meta"].get("notice")]
    assert any("hook of yours" in line for line in notices), notices


def test_a_nan_a_hook_makes_is_said_to_come_from_the_hook_or_the_op():
    doc, t, given = _traced(lambda g: g / paddle.zeros_like(g))
    assert np.isfinite(given["grad"]).all()  # the hook was given finite values
    nodes = {n["id"]: n for n in doc["nodes"]}
    first = doc["meta"]["first_nonfinite"]
    assert nodes[first]["ptr"] == hex(int(t.grad_fn.node_ptr()))  # the op right after the hook
    assert doc["meta"]["nonfinite_after_user_hook"] is True
    (problem,) = [p for p in doc["meta"]["problems"] if p["kind"] == "nonfinite"]
    assert "hook of yours" in problem["reason"] and "made here from finite" not in problem["reason"]


def test_a_hook_that_only_reads_leaves_the_statistics():
    """A hook returning None (an oracle, a logger) or the gradient it got changes nothing."""
    for change in (lambda g: None, lambda g: g):
        doc, t, given = _traced(change)
        edge = _edge_into(doc, t)
        assert edge["stats"]["norm"] == pytest.approx(np.linalg.norm(given["grad"]), rel=1e-6)
        assert not any("hook of yours" in line for line in doc["meta"].get("notices", []))


@pytest.mark.parametrize("retain", [False, True])
def test_a_hook_of_an_earlier_step_is_not_taken_for_this_ones(retain):
    """Only the hooks that ran in this backward count: a later step's node at the same
    address (a training loop) is not said to have a hook. (A control: passes before too.)"""
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    with trace(model, stats=True):
        for step in range(3):
            t = model[1](model[0](paddle.randn([3, 6])))
            if step == 0:
                t.register_hook(lambda g: g * 2.0)
            y = model[2](t).sum()
            y.backward(retain_graph=retain)
    doc = nested_dict(build_graph(y))
    assert all(e.get("stats") is not None for e in doc["edges"])
    assert not any("hook of yours" in line for line in doc["meta"].get("notices", []))


def test_a_parameter_hook_keeps_its_edge_and_drops_its_status():
    """A hook on a parameter (clipping, a freezing mask): its edge keeps what was sent (no op
    after it to blame); its 0-grad status, read from what was sent, is not claimed."""
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    with trace(model, stats=True):
        model[0].weight.register_hook(lambda g: g * 0.0 + 1.0)  # .grad all ones
        y = (model(paddle.randn([3, 6])) * 0.0).sum()  # every gradient sent is zero
        y.backward()
    doc = nested_dict(build_graph(y))
    nodes = {n["id"]: n for n in doc["nodes"]}
    (weight,) = [n for n in nodes.values() if (n.get("param") or {}).get("name") == "0.weight"]
    (edge,) = [e for e in doc["edges"] if e["target"] == weight["id"]]
    assert edge["stats"]["zero_fraction"] == 1.0  # as sent
    assert weight.get("grad_status") is None  # not "0 grad": its .grad is all ones
    assert np.all(model[0].weight.grad.numpy() == 1.0)
    assert not any(p["name"] == "0.weight" for p in doc["meta"].get("problems", []))


def test_the_step_slider_has_no_history_for_an_edge_without_statistics():
    """With steps=K the slider's per-step norms of that edge are left out too: the edge says it
    has no statistics, its tooltip at an earlier step gave one."""
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    with trace(model, stats=True, steps=2):
        for _ in range(2):
            t = model[1](model[0](paddle.randn([3, 6])))
            t.register_hook(lambda g: g * 0.0)
            y = model[2](t).sum()
            y.backward()
    raw = build_graph(y)
    (edge,) = [e for e in raw["edges"] if "no_stats" in e]
    steps = raw["meta"]["steps"]
    assert steps["index"] == [0, 1] and edge["id"] not in steps["norm"]
    assert len(steps["norm"]) == len(raw["edges"]) - 1  # every other edge has its history
