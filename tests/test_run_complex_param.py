"""A watched run of a model with a complex parameter (a learned spectral filter, say): its
gradient was cast to float32 before being reduced, which keeps the real parts alone, so the
log recorded a norm of 12.8 for a gradient of norm 21.3 (and max |g| 8.9 for 13.4). Now each
element's modulus is reduced. Oracle: p.grad read by NumPy in the loop, |g| in float64."""

from __future__ import annotations

import math

import numpy as np
import paddle
import pytest

from paddleviz_widget import open_run, trace


class Spectral(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.filter = self.create_parameter(
            [6], dtype="complex64", default_initializer=paddle.nn.initializer.Constant(0.5)
        )
        self.scale = self.create_parameter([6])

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.abs(self.filter * x).sum() + (self.scale * 2.0).sum()


def test_a_complex_parameter_s_gradient_is_summarised_by_its_moduli(tmp_path):
    model = Spectral()
    model.filter.set_value(
        paddle.to_tensor(np.array([0.5 - 1j, 2 + 0.3j, -1j, 1, 1 + 1j, 3j], np.complex64))
    )
    x = np.arange(1, 7).astype(np.complex64) * (1 + 2j)
    nan_x = x.copy()
    nan_x[2] = complex(np.nan, 0)
    want = []
    with trace(model, every=100, run_dir=tmp_path / "run"):
        for step_x in (x, nan_x):
            model(paddle.to_tensor(step_x)).backward()
            g = np.abs(model.filter.grad.numpy().astype(np.complex128))
            assert np.nanmax(np.abs(model.filter.grad.numpy().imag)) > 1  # both parts count
            finite = g[np.isfinite(g)]
            want.append((math.sqrt(float((finite**2).sum())), float(finite.max()),
                         int(np.isnan(g).sum())))  # fmt: skip
            model.clear_gradients()
    run = open_run(tmp_path / "run")
    col = [p.name for p in run.params].index("filter")
    norm, top, nan = (run.param_stat(s)[:, col] for s in ("norm", "max_abs", "nan"))
    assert norm.tolist() == pytest.approx([w[0] for w in want], rel=1e-6)  # was 12.77 for 21.33
    assert top.tolist() == pytest.approx([w[1] for w in want], rel=1e-6)
    assert nan.tolist() == [w[2] for w in want] and want[1][2] > 0
