"""Gradient statistics of a real backward, edge by edge (capture/grad_stats.py + merge/stats.py),
against an independent account: the gradients Paddle hands to tensor hooks and to ``.grad``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget.tracer.capture.cpu_reduce import CHUNK, SPLIT_FROM
from paddleviz_widget.tracer.capture.grad_stats import StatsCapture
from paddleviz_widget.tracer.capture.stats_watch import run_with_stats
from paddleviz_widget.tracer.merge.stats import param_statuses
from paddleviz_widget.tracer.read.walk import walk_backward_graph

pytestmark = requires_post_hooks  # 2.6 gets no statistics (the README says so)


def _nodes(root: paddle.Tensor) -> dict[int, Any]:
    found: dict[int, Any] = {}
    pending = [root.grad_fn]
    while pending:
        node = pending.pop()
        if node is None or int(node.node_ptr()) in found:
            continue
        found[int(node.node_ptr())] = node
        pending.extend(node.next_functions)
    return found


def _backward_with_stats(loss: paddle.Tensor) -> tuple[Any, Any, dict[int, Any]]:
    nodes = _nodes(loss)
    objects: list[Any] = []
    walk = walk_backward_graph([loss.grad_fn], objects)
    _, stats = run_with_stats(loss.backward, walk, objects, [loss])
    return stats, walk, nodes


def _expected(g: np.ndarray) -> dict[str, float]:
    finite = np.isfinite(g)
    a = np.abs(np.where(finite, g, 0.0)).astype(np.float64)
    return {
        "norm": float(np.sqrt((a * a).sum())),
        "max_abs": float(a.max()),
        "mean_abs": float(a.sum() / max(finite.sum(), 1)),
        "zero_fraction": float((g == 0).mean()),
        "nan": int(np.isnan(g).sum()),
        "inf": int(np.isinf(g).sum()),
    }


def _edge(stats: Any, nodes: dict[int, Any], source: str, target: str) -> Any:
    found = [
        s
        for (ptr, index), s in stats.edges.items()
        if nodes[ptr].name() == source and nodes[ptr].next_functions[index].name() == target
    ]
    assert len(found) == 1, (source, target, found)
    return found[0]


def _close(stats: Any, want: dict[str, float]) -> None:
    for field, value in want.items():
        assert getattr(stats, field) == pytest.approx(value, rel=1e-5, abs=1e-7), field


def test_every_edge_equals_the_gradient_paddle_hands_to_hooks_and_grad():
    paddle.seed(0)
    w1 = paddle.create_parameter([4, 8], "float32")
    b1 = paddle.create_parameter([8], "float32")
    w2 = paddle.create_parameter([8, 3], "float32")
    x = paddle.randn([5, 4])
    h1 = paddle.matmul(x, w1)
    h2 = h1 + b1
    h3 = paddle.nn.functional.relu(h2)
    loss = paddle.matmul(h3, w2).square().mean()
    seen: dict[str, np.ndarray] = {}
    for name, t in (("h1", h1), ("h2", h2), ("h3", h3)):
        t.register_hook(lambda g, name=name: seen.__setitem__(name, g.numpy().copy()))
    stats, _, nodes = _backward_with_stats(loss)
    _close(_edge(stats, nodes, "ReluGradNode", "AddGradNode"), _expected(seen["h2"]))
    _close(_edge(stats, nodes, "AddGradNode", "MatmulGradNode"), _expected(seen["h1"]))
    _close(_edge(stats, nodes, "AddGradNode", "GradNodeAccumulation"), _expected(b1.grad.numpy()))
    relu_zeros = _edge(stats, nodes, "ReluGradNode", "AddGradNode").zero_fraction
    assert 0 < relu_zeros < 1  # ReLU's gradient really has zeros where it was off
    assert stats.first_nonfinite is None


def test_the_first_nonfinite_gradient_is_traced_to_the_node_that_made_it():
    """sqrt'(0) is inf: the SqrtGradNode turns a finite gradient into Inf, and everything
    downstream of it in the backward carries it on."""
    w = paddle.create_parameter([3], "float32")
    x = paddle.to_tensor([0.0, 1.0, 4.0])
    loss = (paddle.sqrt(x * w.abs()) * 2.0).sum()
    stats, _, nodes = _backward_with_stats(loss)
    assert nodes[stats.first_nonfinite].name() == "SqrtGradNode"
    bad = _edge(stats, nodes, "SqrtGradNode", "MultiplyGradNode")
    assert bad.inf + bad.nan >= 1 and np.isfinite(bad.norm)
    assert not np.isfinite(w.grad.numpy()).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_gradients_are_reduced_without_overflow(dtype):
    w = paddle.create_parameter([64], "float32")
    # Each element's gradient is 300 (a float16 gradient); 300**2 * 64 overflows float16 if
    # the norm were summed in float16.
    loss = (w.astype(dtype) * 300.0).astype("float32").sum()
    stats, _, nodes = _backward_with_stats(loss)
    into_cast = _edge(stats, nodes, "ScaleGradNode", "CastGradNode")
    assert into_cast.norm == pytest.approx(300.0 * 8.0, rel=1e-3)
    assert into_cast.nan == into_cast.inf == 0


def test_a_parameter_whose_gradient_is_all_zeros_is_flagged():
    used = paddle.create_parameter([3], "float32")
    dead = paddle.create_parameter([3], "float32")
    loss = (used * 2.0).sum() + (dead * 0.0).sum()
    stats, walk, nodes = _backward_with_stats(loss)
    statuses = param_statuses(walk, stats)
    acc = {int(t.grad_fn.node_ptr()): name for name, t in (("used", used), ("dead", dead))}
    assert {acc[p]: s for p, s in statuses.items()} == {"dead": "zero"}


def test_list_slot_nodes_are_not_hooked_and_the_backward_is_untouched():
    """A post hook on concat's node would abort the backward (Paddle 3.3): it is skipped, its
    edges have no statistics, and the gradients equal a backward without any capture."""
    paddle.seed(1)
    a = paddle.create_parameter([2, 3], "float32")
    b = paddle.create_parameter([2, 3], "float32")
    loss = paddle.concat([a * 2.0, b], axis=0).square().sum()
    stats, _, nodes = _backward_with_stats(loss)
    concat = [p for p, n in nodes.items() if n.name() == "ConcatGradNode"]
    assert set(concat) <= stats.skipped
    assert not [k for k in stats.edges if k[0] in concat]
    expected_a = (2.0 * 2.0 * 2.0 * a.numpy()).astype("float32")  # d/da (2a)^2 = 8a
    np.testing.assert_allclose(a.grad.numpy(), expected_a, rtol=1e-6)


def test_hooks_are_removed_after_the_backward():
    w = paddle.create_parameter([3], "float32")
    loss = (w * w).sum()
    nodes = _nodes(loss)
    capture = StatsCapture()
    capture.arm(nodes.values())
    loss.backward(retain_graph=True)
    capture.disarm()
    runs = len(capture.runs)
    loss.backward()  # the retained graph runs again: no hook of ours may fire
    assert len(capture.runs) == runs > 0


@pytest.mark.parametrize("also_held", [False, True])
def test_every_reference_paddle_keeps_to_the_hooks_list_is_given_back(also_held):
    """Paddle keeps a reference to the list a post hook returns, once per call (hook_returns.py);
    after disarm() exactly those are given back: the list is held by the capture alone (one
    more would leak it every backward, one fewer would free it under the capture), also when
    something else holds it while they are given back."""
    import sys

    w = paddle.create_parameter([3, 4], "float32")
    loss = ((paddle.randn([2, 3]) @ w).tanh() * 2.0).exp().sum()
    objects: list[Any] = []
    walk = walk_backward_graph([loss.grad_fn], objects)
    capture = StatsCapture()
    capture.arm(objects, walked=walk.nodes)
    if capture._results.result is None:
        pytest.skip(f"paddle {paddle.__version__} keeps no reference to a hook's result")
    # (no name of ours holds the list: the capture's attribute, the hook's cell, the argument)
    # (counted into ints first: pytest's rewritten asserts would hold the list meanwhile)
    held = sys.getrefcount(capture._results.result)
    loss.backward()
    during = sys.getrefcount(capture._results.result)
    capture.collect()
    elsewhere = [capture._results.result] if also_held else []
    capture.disarm()
    elsewhere.clear()
    after = sys.getrefcount(capture._results.result)
    emptied = not capture._results.result
    assert during >= held + 3  # one per hooked node run
    assert emptied and after == 2  # the capture's, getrefcount's argument


def test_a_disarmed_capture_is_freed_without_the_cyclic_collector():
    """The hook holds the capture's methods and the capture its hook: once disarmed, nothing
    may keep that cycle, or each captured step's ~30k objects (llama-10k) waited for a
    collection (~10 ms of a step) instead of going when the capture does."""
    import gc
    import weakref

    w = paddle.create_parameter([3, 4], "float32")
    loss = (paddle.randn([2, 3]) @ w).tanh().sum()
    objects: list[Any] = []
    walk = walk_backward_graph([loss.grad_fn], objects)
    gc.collect()
    gc.disable()
    try:
        capture = StatsCapture()
        capture.arm(objects, walked=walk.nodes)
        loss.backward()
        assert capture.collect() is not None
        capture.disarm()
        gone = weakref.ref(capture)
        del capture
        assert gone() is None
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "values",
    [
        pytest.param(lambda n: np.random.default_rng(2).standard_normal(n), id="blocks-and-tail"),
        pytest.param(lambda n: np.where(np.arange(n) % 3 == 0, 0.0, 1.5), id="zeros"),
        pytest.param(lambda n: np.full(n, 1e30), id="squares-overflow-float32"),
        pytest.param(
            lambda n: np.where(np.arange(n) % 2 == 0, 1e-42, -0.0), id="denormal-and-minus-zero"
        ),
        pytest.param(
            lambda n: np.where(
                np.arange(n) % 5 == 0, np.nan, np.where(np.arange(n) % 7 == 0, -np.inf, 2.0)
            ),
            id="nan-and-inf",
        ),
    ],
)
def test_large_cpu_gradients_match_float64_numpy(values):
    """The CPU path reads gradients in place, in two halves on two threads and chunk by
    chunk: chunks plus a tail, exact zeros (-0.0 too), denormals (not zero), NaN and Inf
    and values whose float32 squares overflow are all counted like float64 NumPy does."""
    assert SPLIT_FROM >= CHUNK
    n = 2 * SPLIT_FROM + 12345  # two threads, each over more than one chunk
    g = paddle.to_tensor(values(n).astype(np.float32))
    w = paddle.create_parameter([n], "float32")
    h = w * 1.0
    seen: dict[str, np.ndarray] = {}
    h.register_hook(lambda t: seen.__setitem__("h", t.numpy().copy()))
    loss = (h * g).sum()
    stats, _, nodes = _backward_with_stats(loss)
    _close(_edge(stats, nodes, "MultiplyGradNode", "ScaleGradNode"), _expected(seen["h"]))


def test_a_gradient_paddle_later_adds_into_is_read_as_it_was_sent():
    """A parameter used twice: Paddle adds the second gradient into the first one's memory
    after the first hook has returned. Each edge's statistics are of what it carried."""
    w = paddle.create_parameter([4], "float32")
    x = paddle.to_tensor([1.0, 2.0, 3.0, 4.0])
    loss = (x * w).sum() + ((x * 10.0) * w).sum()
    stats, _, nodes = _backward_with_stats(loss)
    into_w = sorted(
        s.norm
        for (ptr, index), s in stats.edges.items()
        if nodes[ptr].next_functions[index].name() == "GradNodeAccumulation"
    )
    assert into_w == pytest.approx([np.sqrt(30.0), 10 * np.sqrt(30.0)], rel=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), [11.0, 22.0, 33.0, 44.0])


@pytest.mark.skipif(
    paddle.ones([1]).dtype is not paddle.float32,
    reason=f"paddle {paddle.__version__}: dtypes are not singletons (the address path, taken "
    "for `t.dtype is paddle.float32`, needs >= 3.1; NumPy copies, the same numbers, before)",
)
def test_small_gradients_copied_from_their_address_equal_the_numpy_copies(monkeypatch):
    """Small dense contiguous CPU float32 gradients are copied from ``data_ptr()`` in the hook
    (stats_hook.py, into small_grads' lanes); every edge's statistics equal, bit for bit, those
    of the ``numpy()`` copies the hook took before (the fast path turned off), with a
    transposed gradient (not contiguous: still ``numpy()``) and a row slice (contiguous, at an
    offset) among them."""
    from paddleviz_widget.tracer.capture import grad_stats, small_grads

    def run() -> dict[tuple[str, int], Any]:
        paddle.seed(3)
        w = paddle.create_parameter([6, 5], "float32")
        b = paddle.create_parameter([5], "float32")
        x = paddle.randn([4, 6])
        h = paddle.matmul(x, w) + b
        t = h.transpose([1, 0]).tanh()  # its gradient reaches h transposed
        loss = (t * t).sum() + h[1:3].exp().sum() + (w * 3.0).sum()
        stats, _, nodes = _backward_with_stats(loss)
        return {(nodes[p].name(), i): s for (p, i), s in stats.edges.items()}

    copied: list[int] = []
    memmove = small_grads._memmove
    monkeypatch.setattr(small_grads, "_memmove",
                        lambda *a: copied.append(a[2]) or memmove(*a))  # fmt: skip
    fast = run()
    assert len(copied) >= 6  # the fast path was taken
    monkeypatch.setattr(grad_stats, "LIMIT", 0)  # every gradient through numpy() again
    copied.clear()
    slow = run()
    assert not copied
    assert fast == slow and len(fast) >= 8
    assert all(s.norm > 0 for s in fast.values())


@pytest.mark.parametrize(
    ("n", "dtype", "value"),
    [
        pytest.param(4, "float32", 1e-30, id="small-copied"),
        pytest.param(2 * SPLIT_FROM + 12345, "float32", 1e-30, id="large-in-place"),
        pytest.param(4, "float32", 1e-42, id="small-denormal"),
        pytest.param(2 * SPLIT_FROM + 12345, "float32", 1e-42, id="large-denormal"),
        pytest.param(64, "bfloat16", 1e-35, id="on-device-ops"),
    ],
)
def test_tiny_gradients_have_their_norm_not_zero(n, dtype, value):
    """Gradients far below 1 (a loss scaled down, a vanishing branch) square to 0 in float32
    below ~1e-23: the page then drew such an edge grey, "all zeros", and said ‖g‖ 0 beside
    max |g| 1e-30. The norm is compared without an absolute tolerance."""
    g = paddle.to_tensor(np.full(n, value, np.float32)).astype(dtype)
    w = paddle.create_parameter([n], "float32")
    h = (w if dtype == "float32" else w.astype(dtype)) * 1.0
    seen: dict[str, np.ndarray] = {}
    h.register_hook(lambda t: seen.__setitem__("h", t.astype("float32").numpy().copy()))
    loss = (h * g).astype("float32").sum()
    stats, _, nodes = _backward_with_stats(loss)
    got = _edge(stats, nodes, "MultiplyGradNode", "ScaleGradNode")
    want = _expected(seen["h"])
    assert want["norm"] > 0
    assert got.norm == pytest.approx(want["norm"], rel=1e-5, abs=0)
    assert got.max_abs == pytest.approx(want["max_abs"], rel=1e-5, abs=0)


def test_the_tensor_op_reduction_scales_a_tiny_gradient_back_by_its_own_divisor():
    """Off the CPU (and where DLPack cannot read a gradient) the norm is reduced by tensor
    ops, dividing by max(max |x|, 1e-30): below 1e-30 it was multiplied back by max |x|."""
    from paddleviz_widget.tracer.capture.grad_stats import _reduce

    g = np.full(64, 1e-35, np.float32)
    sizes, _ = _reduce(paddle, paddle.to_tensor(g))
    norm, top, _ = sizes.numpy()
    assert norm == pytest.approx(_expected(g)["norm"], rel=1e-5, abs=0)
    assert top == pytest.approx(1e-35, rel=1e-6, abs=0)


@pytest.mark.skipif(
    paddle.ones([1]).dtype is not paddle.float32,
    reason=f"paddle {paddle.__version__}: dtypes are not singletons (no address path)",
)
def test_strided_small_gradients_gathered_after_the_backward_equal_the_numpy_copies(monkeypatch):
    """A small dense gradient that is a strided view (a transpose's or permute's, as attention
    sends: llama-10k ~500 a backward) has the memory it spans copied in the hook and its
    values gathered in C order after the backward (SmallGrads.add_strided): every edge's
    statistics equal, bit for bit, those of the path through ``numpy()`` (the address path
    turned off), for 2-D and 4-D views with and without size-1 dimensions."""
    from paddleviz_widget.tracer.capture import grad_stats, small_grads

    def run() -> dict[tuple[str, int], Any]:
        paddle.seed(5)
        w = paddle.create_parameter([6, 5], "float32")
        q = paddle.create_parameter([1, 2, 8, 4], "float32")
        k = paddle.create_parameter([3, 2, 4, 5], "float32")
        x = paddle.randn([4, 6])
        h = paddle.matmul(x, w).transpose([1, 0]).tanh()
        a = q.transpose([0, 2, 1, 3]).sin()  # (1, 8, 2, 4): attention's head split
        b = (k * 1.5).transpose([3, 1, 0, 2]).cos()  # (5, 2, 3, 4)
        loss = (h * h).sum() + (a * a).sum() + b.sum() + (a[:, :, :1] ** 3).sum()
        stats, _, nodes = _backward_with_stats(loss)
        return {(nodes[p].name(), i): s for (p, i), s in stats.edges.items()}

    strided: list[bool] = []
    add_strided = small_grads.SmallGrads.add_strided

    def counted(self: Any, *args: Any) -> bool:
        strided.append(add_strided(self, *args))
        return strided[-1]

    monkeypatch.setattr(small_grads.SmallGrads, "add_strided", counted)
    fast = run()
    assert strided.count(True) >= 3  # the strided path was taken
    monkeypatch.setattr(grad_stats, "LIMIT", 0)
    strided.clear()
    slow = run()
    assert not strided
    assert fast == slow and len(fast) >= 10
    assert all(s.norm > 0 for s in fast.values())
