"""Statistics of a CPU gradient, read in place through DLPack (no copy of it) inside the
hook: [norm, max_abs, abs_sum, zeros, nan, non-finite], sizes over the finite elements, the
fields the tensor-op path (``grad_stats._reduce``) gives on other devices.

Paddle's eager ops each allocate their result, and the zero count alone (a comparison, a
cast, a sum) cost more than all the other statistics together: on ResNet-50 the Paddle
reductions took ~100 ms of a ~200 ms step. NumPy's reductions are single passes; the one
element-wise result needed (|x|) goes into a scratch buffer the caller reuses. Sums are
per chunk (NumPy's pairwise sum, BLAS dot) with float64 totals, accurate to ~1e-7.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

SPLIT_FROM = 1 << 18  # gradients of this many elements on are read by two threads
CHUNK = 1 << 18  # elements read at a time (1 MB of float32: it stays in the core's L2)
_BITS = {4: np.uint32, 8: np.uint64}  # same-size integers, to read floats' bits


class CpuReader:
    """``read(paddle, t)``: the statistics of CPU float tensor ``t``, or None if DLPack cannot
    describe it (then the tensor-op path reduces it). Read before the hook returns: the
    backward may write into a gradient's memory afterwards (a parameter used twice gets the
    second gradient added in place into the first). Keeps a chunk of |x| per thread and
    dtype, and a helper thread, until ``release()``."""

    def __init__(self) -> None:
        self._scratch: dict[Any, np.ndarray] = {}
        self._helper: ThreadPoolExecutor | None = None

    def read(self, paddle: Any, t: Any) -> list[float] | None:
        own = t.dtype not in (paddle.float32, paddle.float64)  # NumPy has no bfloat16
        x = t.astype("float32") if own else t.detach()
        try:
            a = np.from_dlpack(x).reshape(-1)
        except (BufferError, TypeError, RuntimeError):  # a layout DLPack cannot describe
            return None
        buffer = self._buffer(a.dtype)
        if a.size < SPLIT_FROM:
            return array_stats(a, buffer[:CHUNK])
        # Paddle's CPU backward runs on one core: a second thread reads the other half. Both
        # halves are read before the hook returns.
        if self._helper is None:
            self._helper = ThreadPoolExecutor(1, thread_name_prefix="pvw-grad-stats")
        h = a.size // 2
        second = self._helper.submit(array_stats, a[h:], buffer[CHUNK:])
        first = array_stats(a[:h], buffer[:CHUNK])
        return merged(first, second.result())

    def release(self) -> None:
        self._scratch.clear()
        if self._helper is not None:
            self._helper.shutdown()
            self._helper = None

    def _buffer(self, dtype: Any) -> np.ndarray:
        """A chunk's worth of scratch per thread."""
        held = self._scratch.get(dtype)
        if held is None:
            held = self._scratch[dtype] = np.empty(2 * CHUNK, dtype)
        return held


def merged(x: list[float], y: list[float]) -> list[float]:
    """The statistics of two parts together."""
    return [math.hypot(x[0], y[0]), max(x[1], y[1]), *(p + q for p, q in zip(x[2:], y[2:]))]


#: Below this largest |x|, float32 squares lose precision or underflow to 0 (a gradient of
#: 1e-30s had norm 0, drawn as an all-zero edge): such values are scaled by their maximum.
TINY = 2.0**-60


def array_stats(a: np.ndarray, buffer: np.ndarray) -> list[float]:
    """The statistics of flat float array ``a``; ``buffer``: CHUNK elements of ``a``'s dtype
    that may be overwritten. Read chunk by chunk: each chunk's |x| stays in the core's cache
    for the four reductions that read it, so memory is read about once."""
    # A sum of |x| past the dtype's range (an exploding gradient: 1e37s in float32) is what
    # the NaN/Inf branch below handles: NumPy's overflow warning would be printed into the
    # user's output, and under warnings-as-errors it raised inside Paddle's backward (an
    # OSError from loss.backward()). errstate is per thread: each reading thread sets its own.
    with np.errstate(over="ignore", invalid="ignore"):
        return _array_stats(a, buffer)


def _array_stats(a: np.ndarray, buffer: np.ndarray) -> list[float]:
    if a.size <= CHUNK:  # most gradients: one chunk, no totals to keep
        squares, *rest = _chunk_stats(a, buffer)
        if math.isfinite(squares) and not 0 < rest[0] < TINY:
            return [math.sqrt(squares), *map(float, rest)]
    squares = top = total = 0.0
    zeros = nan = nonfinite = 0
    for k in range(0, a.size, CHUNK):
        part = _chunk_stats(a[k : k + CHUNK], buffer)
        squares += part[0]
        top = max(top, part[1])
        total += part[2]
        zeros, nan, nonfinite = zeros + part[3], nan + part[4], nonfinite + part[5]
    norm = math.sqrt(squares)
    if not math.isfinite(norm) or 0 < top < TINY:  # squares overflow or underflow: scaled
        norm = top * math.sqrt(
            sum(_scaled_squares(a[k : k + CHUNK], top) for k in range(0, a.size, CHUNK))
        )
    return [norm, top, total, float(zeros), float(nan), float(nonfinite)]


def _chunk_stats(c: np.ndarray, buffer: np.ndarray) -> tuple[float, float, float, int, int, int]:
    """(sum of squares, max, sum, zeros, NaN, non-finite) of |c| over its finite elements;
    float32 sums of one chunk are accurate to ~1e-7 (pairwise, and BLAS dot per chunk)."""
    b = np.abs(c, out=buffer[: c.size])
    total = float(np.add.reduce(b))  # the ufunc itself: ndarray.sum's wrapper costs as much
    nan = nonfinite = 0
    if not math.isfinite(total):  # NaN/Inf elements, or finite ones whose sum overflows
        finite = np.isfinite(b)
        nan = int(np.count_nonzero(np.isnan(b)))
        nonfinite = b.size - int(np.count_nonzero(finite))
        if nonfinite:
            b = b[finite]
        total = float(b.sum(dtype=np.float64))
    top = float(np.maximum.reduce(b)) if b.size else 0.0
    # |x| is zero exactly where its bits are (-0.0 became +0.0); NumPy counts non-zero
    # integers in one vectorised pass, floats element by element (~10x slower).
    zeros = b.size - int(np.count_nonzero(b.view(_BITS[b.dtype.itemsize])))
    return float(np.dot(b, b)), top, total, zeros, nan, nonfinite


def _scaled_squares(c: np.ndarray, top: float) -> float:
    b = np.abs(c[np.isfinite(c)]) / top
    return float(np.dot(b, b))
