"""Small CPU gradients, copied in the hook and reduced together after the backward.

A 10k-GradNode model sends ~11k gradients of a few hundred elements each: reading each in place
(cpu_reduce.py: a DLPack view, then five NumPy reductions) costs ~40 us of calls per gradient,
where ``Tensor.numpy()`` copies one in ~2 us. The copies are reduced per segment, all at once
(``np.*.reduceat``, sums in float64), into the rows cpu_reduce would give: [norm, max_abs, abs_sum,
zeros, nan, non-finite] over the finite elements. The copy is taken before the hook returns
(the backward may add into a gradient's memory afterwards). A dense contiguous float32 one is
copied from its address by one memmove (``add_at``), not through ``numpy()``: inside Paddle's
backward a NumPy array costs ~10 us of cold calls, the memmove ~1-3 us; the values kept, and
so the statistics, are the same.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .cpu_reduce import TINY

# Elements: above this a gradient is read in place (cpu_reduce.py), whose ~30 us of calls are
# then small against the reading; below, the copy and the shared reduction are cheaper.
LIMIT = 1 << 12


# Elements per float32 chunk the values are copied into: the ~11k gradients of llama-10k laid
# side by side, not in ~11k arrays of their own, are stacked and reduced in ~20 ms, not ~35.
CHUNK = 1 << 20
_memmove = ctypes.memmove


class SmallGrads:
    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._rows: list[int] = []
        self._at: list[int] = []  # per row: its first element in its chunk
        self._sizes: list[int] = []  # per row: its elements
        self._chunks: list[tuple[int, np.ndarray]] = []  # (first row, chunk) per chunk
        self._chunk = np.empty(0, np.float32)
        self._base = 0  # the chunk's address
        self._used = 0  # elements of _chunk taken

    def _room(self, row: int, n: int) -> int:
        """Where in the chunk ``n`` more elements go (a new chunk when they do not fit)."""
        if self._used + n > self._chunk.size:
            self._chunk = np.empty(max(CHUNK, n), np.float32)
            self._base = self._chunk.ctypes.data
            self._used = 0
            self._chunks.append((len(self._rows), self._chunk))
        at = self._used
        self._used = at + n
        self._rows.append(row)
        self._at.append(at)
        self._sizes.append(n)
        return at

    def add(self, row: int, array: np.ndarray) -> None:
        """``array``: the gradient's values (float32 or float16, may be reused by the caller
        once this returns), for statistics row ``row``. Kept as float32: exact for float16,
        which the reductions widen to float32 anyway."""
        flat = array.reshape(-1)
        at = self._room(row, flat.size)
        self._chunk[at : at + flat.size] = flat

    def add_at(self, row: int, address: int, n: int) -> None:
        """Copy the ``n`` float32 values at ``address`` (a dense contiguous CPU gradient the
        caller holds, ``data_ptr()``) for statistics row ``row``: the same values ``add``
        would keep, in one memmove instead of a NumPy array and a copy (~10 us a gradient
        inside Paddle's backward, where every NumPy call runs cold)."""
        at = self._room(row, n)
        _memmove(self._base + 4 * at, address, 4 * n)

    def fill(self, out: np.ndarray) -> None:
        """Write each gradient's six raw statistics into its row of ``out``."""
        if not self._rows:
            return
        views: list[np.ndarray] = []
        ends = [first for first, _ in self._chunks[1:]] + [len(self._rows)]
        for (first, chunk), end in zip(self._chunks, ends):
            views += [chunk[a : a + n] for a, n in zip(self._at[first:end], self._sizes[first:end])]
        rows = np.asarray(self._rows, np.int64)
        sizes = np.asarray(self._sizes, np.int64)
        # A model sends many gradients of a few sizes: those of one size are stacked into 2-D
        # blocks of up to BLOCK elements, reduced along their rows. Small blocks stay in the
        # cache and in malloc's heap: one flat array of all (~3M elements on llama-10k) had
        # its ~40 MB of temporaries paged in afresh each capture (~60 ms, against ~20 ms).
        values, inverse, counts = np.unique(sizes, return_inverse=True, return_counts=True)
        rest: list[int] = []
        for g, count in enumerate(counts):
            members = np.flatnonzero(inverse == g)
            if count < GROUP_MIN:
                rest += members.tolist()
                continue
            per = max(1, BLOCK // int(values[g]))
            for at in range(0, len(members), per):
                chunk = members[at : at + per]
                block = np.stack([views[k] for k in chunk])
                out[rows[chunk], :6] = _block_rows(block)
        if rest:  # sizes seen a few times: laid end to end, reduced by segment
            flat = np.concatenate([views[k] for k in rest])
            out[rows[rest], :6] = _segment_rows(flat, sizes[rest])
        self._reset()


GROUP_MIN = 8  # gradients of one size stacked into blocks (fewer: reduced by segment)
BLOCK = 1 << 16  # elements per stacked block


def _widened(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|a| in float32 (float16 widened: its squares overflowed from |x| > 256), and where it
    is finite. ``a`` is the caller's fresh stack or concatenation: changed in place."""
    a = a.astype(np.float32, copy=False)
    np.abs(a, out=a)
    return a, np.isfinite(a)


def _squares(a: np.ndarray) -> np.ndarray:
    # Squares in float32 unless one could overflow there (|x| >= 2^63); summed in float64.
    return np.square(a, dtype=np.float64) if a.size and a.max() >= 2.0**63 else np.square(a)


def _tiny_rows(res: np.ndarray) -> np.ndarray:
    """Rows whose largest |x| is below TINY: their float32 squares underflowed (a gradient of
    1e-30s had norm 0), so their norm is summed again from float64 squares."""
    return np.flatnonzero((res[:, 1] > 0) & (res[:, 1] < TINY))


def _block_rows(block: np.ndarray) -> np.ndarray:
    """[norm, max_abs, abs_sum, zeros, nan, non-finite] of each row of a 2-D block, over the
    finite elements."""
    a, finite = _widened(block)
    res = np.zeros((len(a), 6))
    if not finite.all():
        res[:, 4] = np.isnan(a).sum(axis=1)
        res[:, 5] = (~finite).sum(axis=1)
        a[~finite] = 0
    res[:, 0] = np.sqrt(_squares(a).sum(axis=1, dtype=np.float64))
    res[:, 1] = a.max(axis=1)
    tiny = _tiny_rows(res)
    if tiny.size:
        res[tiny, 0] = np.sqrt(np.square(a[tiny], dtype=np.float64).sum(axis=1))
    res[:, 2] = a.sum(axis=1, dtype=np.float64)
    res[:, 3] = (a == 0).sum(axis=1) - res[:, 5]
    return res


def _segment_rows(flat: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The same rows for gradients laid end to end in ``flat`` (``sizes`` elements each)."""
    starts = np.zeros(len(sizes), np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    a, finite = _widened(flat)
    res = np.zeros((len(sizes), 6))
    if not finite.all():
        res[:, 4] = np.add.reduceat(np.isnan(a), starts, dtype=np.int64)
        res[:, 5] = np.add.reduceat(~finite, starts, dtype=np.int64)
        a[~finite] = 0
    res[:, 0] = np.sqrt(np.add.reduceat(_squares(a), starts, dtype=np.float64))
    res[:, 1] = np.maximum.reduceat(a, starts)
    tiny = _tiny_rows(res)
    if tiny.size:
        res[tiny, 0] = np.sqrt(np.add.reduceat(np.square(a, dtype=np.float64), starts))[tiny]
    res[:, 2] = np.add.reduceat(a, starts, dtype=np.float64)
    res[:, 3] = np.add.reduceat(a == 0, starts, dtype=np.int64) - res[:, 5]
    return res


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
