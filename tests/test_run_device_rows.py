"""The per-step summary on the path of gradients on another device (run here on the CPU, as
Paddle without in-place reading runs it): the gradients' statistics and the loss come to the
host in one copy a step, as issue 20 asks of every device (a second copy for the loss would be
a second wait for the accelerator each step)."""

from __future__ import annotations

import numpy as np
import paddle

from paddleviz_widget.runs.summary import GradSummary


def _step(nan: bool) -> tuple[list, paddle.Tensor]:
    paddle.seed(5)
    layers = paddle.nn.Linear(40, 30), paddle.nn.Tanh(), paddle.nn.Linear(30, 2)
    model = paddle.nn.Sequential(*layers)
    x = paddle.randn([6, 40])
    if nan:
        x[2, 3] = float("nan")
    loss = model(x).square().mean()
    loss.backward()
    return list(model.parameters()), loss


class _HostReads:
    """Counts the calls that bring a tensor's values to the host (numpy, item, tolist)."""

    NAMES = ("numpy", "item", "tolist")

    def __init__(self, monkeypatch) -> None:
        self.count = 0
        for name in self.NAMES:
            original = getattr(paddle.Tensor, name)

            def counted(t, *args, _original=original, **kwargs):
                self.count += 1
                return _original(t, *args, **kwargs)

            monkeypatch.setattr(paddle.Tensor, name, counted)


def _oracle(params: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Norm over the finite elements, NaN and Inf counts, by NumPy float64 from p.grad."""
    norms, nans, infs = [], [], []
    for p in params:
        g = np.asarray(p.grad.numpy(), np.float64).ravel()
        finite = np.isfinite(g)
        norms.append(np.sqrt(np.sum(g[finite] ** 2)))
        nans.append(np.isnan(g).sum())
        infs.append(np.isinf(g).sum())
    return np.array(norms), np.array(nans), np.array(infs)


def test_loss_rides_in_the_gradients_host_copy(monkeypatch):
    params, loss = _step(nan=False)
    expected_loss = float(np.float64(loss.numpy()))
    norms, nans, infs = _oracle(params)
    summary = GradSummary(params, in_place=False, compiled=False)
    reads = _HostReads(monkeypatch)
    norm, _, nan, inf, value, _ = summary.read_step(loss)
    assert reads.count == 1  # one copy: the gradients' rows and the loss together
    assert value == expected_loss
    np.testing.assert_allclose(norm, norms, rtol=1e-6)
    assert (nan == nans).all() and (inf == infs).all()


def test_a_non_finite_loss_and_gradients_in_one_copy(monkeypatch):
    params, loss = _step(nan=True)
    norms, nans, infs = _oracle(params)
    assert nans.sum() > 0
    summary = GradSummary(params, in_place=False, compiled=False)
    reads = _HostReads(monkeypatch)
    norm, _, nan, inf, value, _ = summary.read_step(loss)
    assert reads.count == 1
    assert value is not None and np.isnan(value)
    np.testing.assert_allclose(norm, norms, rtol=1e-6)
    assert (nan == nans).all() and (inf == infs).all()


def test_no_loss_and_a_loss_of_several_elements_are_no_value(monkeypatch):
    params, loss = _step(nan=False)
    summary = GradSummary(params, in_place=False, compiled=False)
    assert summary.read_step(None)[4] is None
    assert summary.read_step(paddle.ones([3]))[4] is None
    reads = _HostReads(monkeypatch)
    summary.read()  # no loss asked for: the gradients' copy alone
    assert reads.count == 1
