"""finite_read.cpu_finite on each of its reads (the compiled check at the tensor's address;
without it a copy up to COPY_LIMIT elements, DLPack in place above), against NumPy's own
isfinite on the tensor's values."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget.runs import grad_kernel
from paddleviz_widget.tracer.capture import finite_read
from paddleviz_widget.tracer.capture.finite_read import COPY_LIMIT
from paddleviz_widget.tracer.capture.finite_read import cpu_finite as _cpu_finite

pytestmark = requires_post_hooks  # the forward check is trace(stats=True)'s (Paddle >= 3.0)


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test on both reads: the compiled all_finite (compiled now, waited for), and the
    NumPy reads a process without llvmlite (or before the compiling ends) makes."""
    check = grad_kernel.kernel("all_finite") if request.param == "compiled" else None
    if request.param == "compiled":
        assert check is not None  # llvmlite is a test dependency: the compiled read is tested
    monkeypatch.setattr(finite_read, "_CHECK", [check])
    return str(request.param)


@pytest.mark.parametrize("numel", [0, 1, 300, COPY_LIMIT, COPY_LIMIT + 1, 3 * COPY_LIMIT])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bad", [None, np.nan, np.inf, -np.inf])
def test_cpu_finite_matches_numpy(numel: int, dtype: str, bad: float | None) -> None:
    values = np.random.default_rng(numel).standard_normal(numel).astype(dtype)
    if bad is not None and numel:
        values[numel // 2] = bad
    t = paddle.to_tensor(values.reshape(-1, 1) if numel else values, place=paddle.CPUPlace())
    t.stop_gradient = False  # a layer's output: DLPack refuses it undetached
    assert _cpu_finite(t) is bool(np.isfinite(values).all())
    assert t.stop_gradient is False  # the user's tensor untouched


def test_cpu_finite_half_is_left_to_the_device_check() -> None:
    t = paddle.to_tensor(np.ones(4, np.float16), place=paddle.CPUPlace())
    assert _cpu_finite(t) is None


def test_huge_finite_values_are_finite() -> None:
    # Near float32's maximum: a sum would overflow, max/min do not.
    values = np.full(COPY_LIMIT // 2, np.finfo(np.float32).max, np.float32)
    assert _cpu_finite(paddle.to_tensor(values, place=paddle.CPUPlace())) is True


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("at", ["first", "last"])
def test_views_are_read_where_they_start_and_end(dtype: str, at: str) -> None:
    """A contiguous slice starts past its base's address; a bad value just outside it is not
    its own, one at its edge is. A strided view is read too (NumPy, through a copy)."""
    base = np.random.default_rng(1).standard_normal(64).astype(dtype)
    base[9 if at == "first" else 40] = np.nan  # just outside [10, 40)
    t = paddle.to_tensor(base, place=paddle.CPUPlace())
    view = t[10:40]
    assert view.is_contiguous()
    assert _cpu_finite(view) is True
    edge = base.copy()
    edge[10 if at == "first" else 39] = np.inf
    assert _cpu_finite(paddle.to_tensor(edge, place=paddle.CPUPlace())[10:40]) is False
    strided = paddle.to_tensor(edge, place=paddle.CPUPlace()).reshape([8, 8])[:, 1:3]
    expected = bool(np.isfinite(edge.reshape(8, 8)[:, 1:3]).all())
    assert _cpu_finite(strided) is expected


@pytest.mark.parametrize("bits", [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800000, 0x7F7FFFFF])
def test_every_nan_and_inf_pattern(bits: int) -> None:
    """Quiet and signalling NaNs of either sign, -Inf, and the largest finite float32."""
    values = np.zeros(33, np.uint32)
    values[17] = bits
    floats = values.view(np.float32)
    t = paddle.to_tensor(floats, place=paddle.CPUPlace())
    assert _cpu_finite(t) is bool(np.isfinite(floats).all())
