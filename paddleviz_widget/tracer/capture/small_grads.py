"""Small CPU gradients, copied in the hook and reduced together after the backward.

A 10k-GradNode model sends ~11k gradients of a few hundred elements each: reading each in place
(cpu_reduce.py: a DLPack view, then five NumPy reductions) costs ~40 us of calls per gradient,
where ``Tensor.numpy()`` copies one in ~2 us. The copies are reduced per segment, all at once
(``np.*.reduceat``, sums in float64), into the rows cpu_reduce would give: [norm, max_abs, abs_sum,
zeros, nan, non-finite] over the finite elements. The copy is taken before the hook returns
(the backward may add into a gradient's memory afterwards).
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Elements: above this a gradient is read in place (cpu_reduce.py), whose ~30 us of calls are
# then small against the reading; below, the copy and the shared reduction are cheaper.
LIMIT = 1 << 12


class SmallGrads:
    def __init__(self) -> None:
        self._rows: list[int] = []
        self._arrays: list[np.ndarray] = []

    def add(self, row: int, array: np.ndarray) -> None:
        """``array``: the gradient's own copy (float32 or float16), for statistics row ``row``."""
        self._rows.append(row)
        self._arrays.append(array.reshape(-1))

    def fill(self, out: np.ndarray) -> None:
        """Write each gradient's six raw statistics into its row of ``out``."""
        if not self._rows:
            return
        sizes = np.fromiter((a.size for a in self._arrays), np.int64, len(self._arrays))
        starts = np.zeros(len(sizes), np.int64)
        np.cumsum(sizes[:-1], out=starts[1:])
        # float32: float16 ones widened (their squares would overflow from |x| > 256)
        a = np.concatenate(self._arrays).astype(np.float32, copy=False)
        np.abs(a, out=a)
        finite = np.isfinite(a)
        nan = nonfinite = np.zeros(len(sizes), np.int64)
        if not finite.all():
            nan = np.add.reduceat(np.isnan(a), starts, dtype=np.int64)
            nonfinite = np.add.reduceat(~finite, starts, dtype=np.int64)
            a[~finite] = 0  # sizes are over the finite elements
        rows = np.asarray(self._rows, np.int64)
        top = np.maximum.reduceat(a, starts)
        # Sums in float64; squares in float32 unless one could overflow there (|x| >= 2^63).
        wide = bool(top.max() >= 2.0**63)
        squares = np.square(a, dtype=np.float64) if wide else np.square(a)
        out[rows, 0] = np.sqrt(np.add.reduceat(squares, starts, dtype=np.float64))
        out[rows, 1] = top
        out[rows, 2] = np.add.reduceat(a, starts, dtype=np.float64)
        out[rows, 3] = np.add.reduceat(a == 0, starts, dtype=np.int64) - nonfinite
        out[rows, 4] = nan
        out[rows, 5] = nonfinite
        self._rows, self._arrays = [], []


def small_copy(
    paddle: Any, t: Any, numel: int, dtype: Any = None, cpu: bool | None = None
) -> np.ndarray | None:
    """A copy of CPU float32/float16 gradient ``t`` if it is small, else None (``dtype``,
    ``cpu``: what the caller read of it already)."""
    dtype = t.dtype if dtype is None else dtype
    if numel > LIMIT or dtype not in (paddle.float32, paddle.float16):
        return None
    if not (t.place.is_cpu_place() if cpu is None else cpu):
        return None
    try:
        return np.asarray(t.numpy())
    except (RuntimeError, ValueError, TypeError):  # a tensor numpy() cannot read
        return None
