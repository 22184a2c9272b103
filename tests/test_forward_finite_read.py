"""forward_finite._cpu_finite on both of its reads (a copy up to COPY_LIMIT elements, DLPack in
place above), against NumPy's own isfinite on the tensor's values."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget.tracer.capture.forward_finite import COPY_LIMIT, _cpu_finite

pytestmark = requires_post_hooks  # the forward check is trace(stats=True)'s (Paddle >= 3.0)


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
