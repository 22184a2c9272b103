"""Real faults in watched training runs, found at their step and layer in words a user reads
(bug bash round 15c)."""

from __future__ import annotations

import numpy as np
import paddle
import paddle.nn.functional as F
import pytest

from paddleviz_widget import open_run, trace


def _regression_batch(step: int) -> tuple[paddle.Tensor, paddle.Tensor]:
    rng = np.random.RandomState(step)
    x = rng.randn(32, 20).astype("float32")
    y = np.tanh(x[:, :5]).sum(1, keepdims=True) + x[:, :1]
    return paddle.to_tensor(x), paddle.to_tensor(y.astype("float32"))


def test_a_deep_sigmoid_stack_vanishing_gradually_is_found(tmp_path):
    """16 Linear + Sigmoid layers: each layer's gradient ~x0.2 of the next, so no layer is
    under 1e-3 of its neighbours (the sharp rule says nothing) while layer 0's is ~1e-10 of
    the head's: its weights learn nothing. Found at the rules' first step (20), layers 0-8."""
    paddle.seed(0)
    layers: list[paddle.nn.Layer] = []
    for i in range(16):
        layers += [paddle.nn.Linear(32 if i else 20, 32), paddle.nn.Sigmoid()]
    model = paddle.nn.Sequential(*layers, paddle.nn.Linear(32, 1))
    opt = paddle.optimizer.SGD(0.05, parameters=model.parameters())
    with trace(model, stats=True, every=100, run_dir=tmp_path / "run"):
        for step in range(40):
            x, y = _regression_batch(step)
            F.mse_loss(model(x), y).backward()
            opt.step()
            opt.clear_grad()
    run = open_run(tmp_path / "run")
    norms = run.layer_norm()
    assert (norms[:, 1:] / norms[:, :-1] > 1e-3).all()  # no sharp drop anywhere
    found = run.problems()
    assert {a.kind for a in found} == {"vanishing"}
    assert [a.layer for a in found if a.step == found[0].step] == ["0", "2", "4", "6", "8"]
    assert found[0].step == 20  # the rules are on from step 20 (spike_warmup)
    first = found[0]
    assert first.params == ["0.weight", "0.bias"]
    assert first.value == pytest.approx(norms[20, 0], rel=1e-6)  # layer_norm: float32
    assert first.value < 1e-7 * norms[20].max()
    assert "under 1e-07x the largest layer norm (32: " in first.message
    assert len(found) == 5  # hovering at the limit is one finding, not one a step


def test_a_nan_in_one_batch_is_said_at_its_step_with_layers_and_counts_apart(tmp_path):
    """One NaN in one input of step 30 (nn.Sequential: layers are numbers). The message said
    "NaN/Inf gradients in layers 0, 1, 3 parameters: ..." (read: layers 0, 1 and 3); the
    count now comes first: "in 3 parameters of layers 0, 1: ...". Every later step stays
    NaN (Adam wrote NaN into the weights): one finding for the stretch."""
    paddle.seed(0)
    model = paddle.nn.Sequential(
        paddle.nn.Linear(20, 64), paddle.nn.BatchNorm1D(64), paddle.nn.ReLU(),
        paddle.nn.Linear(64, 1),
    )  # fmt: skip
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    with trace(model, stats=True, every=100, run_dir=tmp_path / "run"):
        for step in range(40):
            x, y = _regression_batch(step)
            if step == 30:
                x[3, 5] = float("nan")
            F.mse_loss(model(x), y).backward()
            opt.step()
            opt.clear_grad()
    run = open_run(tmp_path / "run")
    [found] = run.problems()
    assert (found.step, found.kind, found.layer) == (30, "nonfinite", "0")
    nan = run.param_stat("nan")[30]
    bad = [p.name for p, n in zip(run.params, nan) if n > 0]
    assert found.params == bad and "0.weight" in bad
    assert f"NaN/Inf gradients in {len(bad)} parameters of layers 0, 1: 0.weight (1280 NaN)" in (
        found.message
    ), found.message
