"""A big model's gradients (over 1M elements) read on two threads, by each path, equal
NumPy's float64 account of p.grad: an Inf in the first half, a NaN only in the last layer's
weight (the helper's half), steps recorded between captures and captured."""

from __future__ import annotations

import numpy as np
import paddle
import pytest

from paddleviz_widget import open_run, trace


@pytest.mark.parametrize("path", ["numpy", "halves"])
def test_big_gradients_read_on_two_threads_equal_the_gradients(tmp_path, monkeypatch, path):
    """Both paths read a big model's gradients on two threads: NumPy's (no llvmlite) and the
    compiled read_part's halves (read_halves.py), here cut after the first layer."""
    import threading

    from paddleviz_widget.runs import summary
    from paddleviz_widget.runs.grad_kernel import kernel
    from paddleviz_widget.runs.read_halves import ReadHalves

    if path == "numpy":
        monkeypatch.setattr(summary, "kernel", lambda **_: None)
    elif kernel() is None:  # compiled now, not on the helper thread after step 0
        pytest.skip("llvmlite is not installed (the fast extra)")
    halves: list[int] = []
    read = ReadHalves.read

    def counted(self, args):
        halves.append(self._cut)
        return read(self, args)

    monkeypatch.setattr(ReadHalves, "read", counted)

    paddle.seed(1)
    model = paddle.nn.Sequential(paddle.nn.Linear(1024, 1024), paddle.nn.Linear(1024, 1024),
                                 paddle.nn.Linear(1024, 2))  # fmt: skip
    poison = [False]

    def nan_at_step_4(g):
        if not poison[0]:
            return g
        mask = paddle.zeros_like(g)
        mask[1, 1] = float("nan")
        return g + mask

    model[2].weight.register_hook(nan_at_step_4)
    expected = []
    with trace(model, every=1000, run_dir=tmp_path / "run"):
        for step in range(6):
            x = paddle.randn([4, 1024])
            if step == 2:
                x[0, 5] = float("inf")  # Inf/NaN in the first layer's weight gradient
            poison[0] = step == 4  # a NaN in the last layer's only: the helper's half when cut
            model(x).square().mean().backward()
            grads = [p.grad.numpy().astype(np.float64) for p in model.parameters()]
            finite = [g[np.isfinite(g)] for g in grads]
            expected.append([(float(np.sqrt((f**2).sum())), int(np.isnan(g).sum()),
                              int(np.isinf(g).sum())) for f, g in zip(finite, grads)])  # fmt: skip
            model.clear_gradients()
        assert any(t.name.startswith("pvw-run-summary") for t in threading.enumerate())
    assert not any(t.name.startswith("pvw-run-summary") for t in threading.enumerate())
    run = open_run(tmp_path / "run")
    want = np.array(expected)
    np.testing.assert_allclose(run.param_stat("norm"), want[:, :, 0], rtol=1e-5)
    np.testing.assert_array_equal(run.param_stat("nan"), want[:, :, 1])
    np.testing.assert_array_equal(run.param_stat("inf"), want[:, :, 2])
    assert want[2, 0, 1] + want[2, 0, 2] > 0
    assert want[4, 4, 1] == 1 and want[4, :4, 1:].sum() == 0
    if path == "halves":
        assert halves == [2] * 6  # every step read by the compiled halves, cut after layer 0
