"""A watched run's per-step summary on the NumPy path (no llvmlite: the package's base
install) of a float32 gradient of more than 4,096 elements all below ~1e-22 (a vanishing
layer deep in a saturated stack): their float32 squares underflow, and the log recorded its
norm 43% low, or as exactly 0, which the anomaly rules read as an idle layer, never a
vanishing one. Oracle: p.grad read by NumPy in float64 in the loop, rounded to float32
as the log stores it."""

from __future__ import annotations

import math

import numpy as np
import paddle
import pytest

from paddleviz_widget import open_run, trace
from paddleviz_widget.runs import summary


class Deep(paddle.nn.Layer):
    """``far``'s gradient is ``scale`` times ``near``'s: 5,000 elements each (read one by one,
    not with the small ones)."""

    def __init__(self) -> None:
        super().__init__()
        self.near = paddle.nn.Linear(50, 100)
        self.far = paddle.nn.Linear(50, 100)

    def forward(self, x: paddle.Tensor, scale: float) -> paddle.Tensor:
        return (self.near(x) ** 2).mean() + (self.far(x) ** 2).mean() * scale


# far's largest |g|: 5e-20 (right before too, a control), 5e-23 (read as 4e-22 for 7e-22: its
# squares denormal), 5e-26 (read as 0.0: its squares below float32's smallest)
@pytest.mark.parametrize("scale", [1e-18, 1e-21, 1e-24])
def test_a_vanishing_layer_s_tiny_norm_is_recorded_not_zero(tmp_path, monkeypatch, scale):
    monkeypatch.setattr(summary, "kernel", lambda **_: None)  # the NumPy path, as without llvmlite
    paddle.seed(0)
    model = Deep()
    want = []
    with trace(model, every=100, run_dir=tmp_path / "run"):
        for _ in range(3):
            model(paddle.randn([4, 50]), scale).backward()
            g = model.far.weight.grad.numpy().astype(np.float64)
            assert 0 < np.abs(g).max() < 1e-18 and g.size > summary.SMALL
            want.append(float(np.float32(math.sqrt(float((g * g).sum())))))
            model.clear_gradients()
    run = open_run(tmp_path / "run")
    got = run.param_stat("norm")[:, [p.name for p in run.params].index("far.weight")]
    assert got.tolist() == pytest.approx(want, rel=1e-6, abs=0)
    assert not any(a.kind == "vanishing" for a in run.anomalies)  # (3 steps: no warm-up yet)
