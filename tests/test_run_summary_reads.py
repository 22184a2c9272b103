"""GradSummary's in-place reading across many real steps: gradients at addresses the
allocator hands from one parameter to another (the views shared by address), a NaN/Inf in
a small and in a big gradient: every step equals NumPy's account of p.grad."""

from __future__ import annotations

import numpy as np
import paddle
import pytest

from paddleviz_widget.runs.grad_kernel import kernel
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


@pytest.mark.parametrize("compiled", [False, True])
def test_every_step_equals_the_gradients_as_addresses_move(compiled):
    """compiled: read_step's one compiled call (runs/compiled_read.py); the loss it reads at
    its address is the loss's item(), and a step is clean exactly when it is."""
    if compiled and kernel() is None:
        pytest.skip("llvmlite is not installed (the fast extra)")
    paddle.seed(3)
    model = paddle.nn.Sequential(
        paddle.nn.Linear(64, 96), paddle.nn.ReLU(), paddle.nn.Linear(96, 96),
        paddle.nn.ReLU(), paddle.nn.Linear(96, 5),
    )  # fmt: skip
    params = list(model.parameters())
    sizes = [int(np.prod(p.shape)) for p in params]
    assert min(sizes) <= SMALL < max(sizes)  # both paths
    opt = paddle.optimizer.Adam(1e-3, parameters=params)
    summary = GradSummary(params, compiled=compiled)
    assert (summary._compiled is not None) == compiled
    addresses: set[int] = set()
    for step in range(60):
        x = paddle.randn([8, 64])
        if step in (20, 41):
            x[0, 3] = float("nan") if step == 20 else float("inf")
        loss = model(x).square().mean()
        if step == 30:
            loss = loss.astype("float64")  # the kernel reads float64 too
        loss.backward()
        if compiled:
            *stats, value, clean = summary.read_step(loss)
            assert value == loss.item() and clean == (step not in (20, 41)), step
            got = np.stack(stats)
        else:
            got = np.stack(summary.read())
        want = _oracle(params)
        np.testing.assert_allclose(got[:2], want[:2], rtol=1e-5, err_msg=f"step {step}")
        np.testing.assert_array_equal(got[2:], want[2:], err_msg=f"step {step}")
        if step not in (20, 41):  # max |g| is one of the gradient's values, whatever the path
            tops = [np.abs(p.grad.numpy()).max() for p in params]
            np.testing.assert_array_equal(got[1], tops, err_msg=f"step {step}")
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


def test_compiled_loss_read_at_known_addresses_follows_dtype_and_shape():
    """The loss read at its address (its place checked once per address): a loss whose
    dtype or element count changes between steps, at addresses seen before, is read as
    what it is now, or not at all (None: not one element)."""
    if kernel() is None:
        pytest.skip("llvmlite is not installed (the fast extra)")
    paddle.seed(5)
    model = paddle.nn.Linear(8, 3)
    params = list(model.parameters())
    summary = GradSummary(params)
    shapes = ["scalar", "float64", "two", "one-one", "int"]
    for step in range(60):
        out = model(paddle.randn([4, 8]))
        kind = shapes[step % len(shapes)] if step >= 10 else "scalar"
        loss = out.square().mean()
        out.sum().backward() if kind == "two" else loss.backward()
        shown = {"scalar": loss, "float64": loss.astype("float64") * 3,
                 "two": out.mean(axis=0)[:2], "one-one": loss.reshape([1, 1]) + 1,
                 "int": (loss * 100).astype("int64")}[kind]  # fmt: skip
        *_, value, clean = summary.read_step(shown)
        assert clean
        if kind == "two":
            assert value is None
        else:
            assert value == float(shown.numpy().reshape(-1)[0]), (step, kind)
        model.clear_gradients()
    assert summary._compiled is not None


@pytest.mark.parametrize("compiled", [False, True])
def test_a_gradient_the_user_replaced_is_read_as_it_is(compiled):
    """``p.grad = t`` (gradient surgery) puts a tensor of the user's at a new address: of the
    parameter's shape, of another size, or a strided view. Each is read as it is (the compiled
    call reads in place only a dense, contiguous gradient of the parameter's dtype and shape;
    anything else goes to NumPy), never as ``numel`` values at its address."""
    if compiled and kernel() is None:
        pytest.skip("llvmlite is not installed (the fast extra)")
    paddle.seed(1)
    layer = paddle.nn.Linear(64, 96)
    params = list(layer.parameters())
    summary = GradSummary(params, compiled=compiled)
    replacements = [
        paddle.full([64, 96], 2.0),
        paddle.full([10], 3.0),  # 10 values where the kernel would read 6,144
        paddle.arange(96 * 64, dtype="float32").reshape([96, 64]).T,  # a strided view
    ]
    for step in range(6):
        layer(paddle.randn([4, 64])).sum().backward()
        if step >= 3:
            params[0].grad = replacements[step - 3]
        got = np.stack(summary.read_step(None)[:4] if compiled else summary.read())
        want = _oracle(params)
        np.testing.assert_allclose(got[:2], want[:2], rtol=1e-5, err_msg=f"step {step}")
        layer.clear_gradients()
    summary.release()
