"""GradSummary's in-place reading across many real steps: gradients at addresses the
allocator hands from one parameter to another (the views shared by address), a NaN/Inf in
a small and in a big gradient: every step equals NumPy's account of p.grad."""

from __future__ import annotations

import numpy as np
import paddle

from paddleviz_widget.runs.summary import SMALL, GradSummary


def _oracle(params: list[paddle.Tensor]) -> np.ndarray:
    out = np.zeros((4, len(params)))
    for i, p in enumerate(params):
        g = p.grad.numpy().astype(np.float64).ravel()
        finite = g[np.isfinite(g)]
        out[0, i] = np.sqrt((finite**2).sum())
        out[1, i] = np.abs(finite).max() if finite.size else 0.0
        out[2, i] = np.isnan(g).sum()
        out[3, i] = np.isinf(g).sum()
    return out


def test_every_step_equals_the_gradients_as_addresses_move():
    paddle.seed(3)
    model = paddle.nn.Sequential(
        paddle.nn.Linear(64, 96), paddle.nn.ReLU(), paddle.nn.Linear(96, 96),
        paddle.nn.ReLU(), paddle.nn.Linear(96, 5),
    )  # fmt: skip
    params = list(model.parameters())
    sizes = [int(np.prod(p.shape)) for p in params]
    assert min(sizes) <= SMALL < max(sizes)  # both paths
    opt = paddle.optimizer.Adam(1e-3, parameters=params)
    summary = GradSummary(params)
    addresses: set[int] = set()
    for step in range(60):
        x = paddle.randn([8, 64])
        if step in (20, 41):
            x[0, 3] = float("nan") if step == 20 else float("inf")
        model(x).square().mean().backward()
        got = np.stack(summary.read())
        want = _oracle(params)
        np.testing.assert_allclose(got[:2], want[:2], rtol=1e-5, err_msg=f"step {step}")
        np.testing.assert_array_equal(got[2:], want[2:], err_msg=f"step {step}")
        if step in (20, 41):
            assert got[2:].sum() > 0
        addresses.update(p.grad.data_ptr() for p in params)
        if step not in (20, 41):  # the parameters stay finite
            opt.step()
        opt.clear_grad()
    assert len(addresses) > len(params)  # the allocator moved gradients: fresh reads happened
    summary.release()


def test_loss_value_of_one_element_tensors_only():
    from paddleviz_widget.runs.summary import loss_value

    x = paddle.to_tensor([[1.5, -2.0], [0.25, 4.0]], stop_gradient=False)
    assert loss_value(x.sum()) == 3.75  # shape []
    assert loss_value(x.sum().reshape([1, 1])) == 3.75  # one element, two dims
    assert loss_value(x.mean(axis=0)) is None  # two elements
    assert loss_value(paddle.zeros([0])) is None  # none
    assert loss_value(x.sum().astype("float64") / 3) == 1.25
    assert loss_value(None) is None and loss_value(3.0) is None
