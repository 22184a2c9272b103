"""The one rule for reading a gradient in place, at its address, as ``numel`` values of its
parameter's dtype (summary.py's NumPy views, compiled_read.py's one call): it is dense,
contiguous, of the parameter's dtype and shape, and on the CPU. Anything else goes through
Paddle's own tensor ops.

The readers remember addresses already checked, but a tensor at a known address is read only
with the parameter's dtype and shape again: the allocator hands a freed gradient's buffer to any
tensor, and ``p.grad = t`` (gradient surgery) can put any tensor there.
"""

from __future__ import annotations

from typing import Any

from ..tracer.read.tensor_info import cpu_only_build


def readable_in_place(g: Any, dtype: Any, shape: list[int]) -> bool:
    same = g.dtype is dtype or g.dtype == dtype  # (dtypes are singletons; == costs more)
    return bool(same and g.is_dense() and g.is_contiguous() and g.shape == shape
                and (cpu_only_build() or g.place.is_cpu_place()))  # fmt: skip
