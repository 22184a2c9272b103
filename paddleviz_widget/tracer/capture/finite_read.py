"""Whether one layer output holds a NaN/Inf (forward_finite.py's check, per layer call).

A CPU float32/float64 tensor is read at its address by one compiled pass (runs/finite_ir.py);
until that is compiled, and without llvmlite or Tensor.data_ptr, NumPy reads it (a copy when
small, DLPack in place above). On other devices: a device-side flag, read once later.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .grad_stats import _addressable
from .stack_gate import call_stacks_off


@functools.cache
def _types() -> tuple[Any, tuple[Any, ...], tuple[Any, ...]]:
    """paddle.Tensor, the floating dtypes and those NumPy reads here (no import statement
    per layer call)."""
    import paddle

    read = (paddle.float32, paddle.float64)
    return paddle.Tensor, (*read, paddle.float16, paddle.bfloat16), read


# Elements up to which a CPU output is copied (Tensor.numpy, ~1 us for a few thousand) rather
# than read in place: detach + DLPack cost ~4 us a tensor, and a 10k-GradNode model's forward
# checks ~1,800 layer outputs of a few hundred elements each.
COPY_LIMIT = 1 << 14


_MAX, _MIN = np.maximum.reduce, np.minimum.reduce  # ndarray.max/min without their wrappers


def cpu_finite(t: Any, dtype: Any = None) -> bool | None:
    """Finite, read by NumPy (small: a copy, else in place); None when NumPy cannot read it
    (half types, odd layouts). ``dtype``: ``t.dtype``, if read already."""
    dtype = t.dtype if dtype is None else dtype
    read = _types()[2]
    if dtype not in read:
        return None
    if not t.is_dense():  # a paddle.sparse output (~0.1 us): not read (sparse_grads.py)
        return True
    check = _compiled_check()
    if check is not None and t.is_contiguous():  # read at its address, one compiled pass
        n = math.prod(t.shape)
        address = t.data_ptr() if n else 0
        if n == 0 or address:
            # float32 by identity, else by ==: Paddle 3.0's dtypes are not singletons, and its
            # float32 read as float64 (twice the bytes) gave false alarms or a segfault
            f64 = dtype is not read[0] and dtype != read[0]
            return n == 0 or bool(check(address, n, 1 if f64 else 0))
    try:
        if math.prod(t.shape) <= COPY_LIMIT:
            a = np.asarray(t.numpy())
        else:
            a = np.from_dlpack(t.detach())
    except (BufferError, TypeError, RuntimeError, ValueError):  # odd layout, no data
        return None
    # max/min propagate NaN, and an Inf is its own max or min: two passes, no array made.
    return a.size == 0 or (math.isfinite(_MAX(a, axis=None)) and math.isfinite(_MIN(a, axis=None)))


_CHECK: list[Any] = []  # all_finite once settled (None: not compiled here)


def _compiled_check() -> Any:
    """runs/finite_ir.py's all_finite, once compiled (the compiling starts on a helper thread
    at the first call; until then, and without llvmlite or Tensor.data_ptr, NumPy reads)."""
    if _CHECK:
        return _CHECK[0]
    if not _addressable():
        _CHECK.append(None)
        return None
    from ...runs import grad_kernel  # (the run log's package: imported here once)

    check = grad_kernel.kernel("all_finite", wait=False)
    if check is not None or grad_kernel.settled():
        _CHECK.append(check)
    return check


def device_flag(t: Any) -> Any:
    import paddle

    with paddle.no_grad(), call_stacks_off():
        return paddle.isfinite(t).all()
