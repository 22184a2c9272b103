"""Small CPU gradients, copied in the hook and reduced together after the backward.

A 10k-GradNode model sends ~11k gradients of a few hundred elements each: reading each in place
(cpu_reduce.py: a DLPack view, then five NumPy reductions) costs ~40 us of calls per gradient,
where ``Tensor.numpy()`` copies one in ~2 us. The copies are reduced per segment, all at once
(``np.*.reduceat``, sums in float64), into the rows cpu_reduce would give: [norm, max_abs, abs_sum,
zeros, nan, non-finite] over the finite elements. The copy is taken before the hook returns
(the backward may add into a gradient's memory afterwards). A dense contiguous float32 one is
copied from its address by one memmove into its lane (``_memmove``, by the hook itself:
stats_hook.py), not through ``numpy()``: inside Paddle's
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


_memmove = ctypes.memmove  # read by stats_hook.hook_maker when a backward's hooks are made


class _Lane:
    """The gradients of one size, copied side by side into float32 blocks of ``per`` rows:
    each block is one C-contiguous (rows, size) array as it stands, which ``fill`` reduces
    along its rows (no per-gradient view, no stacked copy: ~20 ms of a llama-10k capture).
    A lane's first block grows by doubling up to ``per`` rows (a size seen once costs one
    row of memory), then blocks of ``per`` rows follow."""

    __slots__ = ("n", "per", "rows", "full", "chunk", "base", "used", "cap")

    def __init__(self, n: int) -> None:
        self.n = n
        self.per = max(1, BLOCK // n)  # fill's block of this size
        self.rows: list[int] = []  # statistics rows, in the order added (ascending)
        self.full: list[np.ndarray] = []  # blocks of ``per`` rows, filled
        self.chunk = np.empty(n, np.float32)  # the block being filled
        self.base = self.chunk.ctypes.data
        self.used = 0  # its rows
        self.cap = 1  # rows ``chunk`` holds: while used < cap, the next goes at used * n

    def room(self, row: int) -> int:
        """Where in ``chunk`` (elements) the next gradient goes."""
        if self.used == self.per:
            self.full.append(self.chunk)
            self.chunk = np.empty(self.per * self.n, np.float32)
            self.base, self.used, self.cap = self.chunk.ctypes.data, 0, self.per
        elif self.used == self.cap:  # the first block, grown
            self.cap = min(2 * self.used, self.per)
            grown = np.empty(self.cap * self.n, np.float32)
            grown[: self.chunk.size] = self.chunk
            self.chunk, self.base = grown, grown.ctypes.data
        at = self.used * self.n
        self.used += 1
        self.rows.append(row)
        return at

    def blocks(self) -> list[tuple[list[int], np.ndarray]]:
        """(statistics rows, 2-D block) per block: the rows of this size in groups of ``per``,
        in the order added."""
        n, per, rows = self.n, self.per, self.rows
        out = [(rows[k * per : (k + 1) * per], b.reshape(per, n)) for k, b in enumerate(self.full)]
        if self.used:
            last = self.chunk[: self.used * n].reshape(self.used, n)
            out.append((rows[len(self.full) * per :], last))
        return out

    def views(self) -> list[np.ndarray]:
        """Each gradient's values (1-D), in the order added."""
        return [values for _, block in self.blocks() for values in block]


class SmallGrads:
    def __init__(self) -> None:
        self._lanes: dict[int, _Lane] = {}  # by size (elements)
        # Strided gradients: the memory each spans, copied in the hook, end to end; and where
        # each goes once gathered (add_strided)
        self._side = np.empty(1 << 12, np.float32)
        self._side_used = 0
        self._strided: list[tuple[_Lane, int, int, int, tuple[int, ...], tuple[int, ...]]] = []

    def _lane(self, n: int) -> _Lane:
        lane = self._lanes.get(n)
        if lane is None:
            lane = self._lanes[n] = _Lane(n)
        return lane

    def add(self, row: int, array: np.ndarray) -> None:
        """``array``: the gradient's values (float32 or float16, may be reused by the caller
        once this returns), for statistics row ``row``. Kept as float32: exact for float16,
        which the reductions widen to float32 anyway."""
        flat = array.reshape(-1)
        lane = self._lane(flat.size)
        at = lane.room(row)
        lane.chunk[at : at + flat.size] = flat

    def add_strided(
        self, row: int, address: int, shape: tuple[int, ...], strides: Any, n: int
    ) -> bool:  # fmt: skip
        """Keep the ``n`` float32 values of a dense CPU gradient that is a strided view (a
        transpose's gradient: ~500 a llama-10k backward), for statistics row ``row``: the
        memory it spans is copied now (one memmove, where ``numpy()`` costs ~20 us inside
        Paddle's backward), its values gathered in C order, as ``numpy()`` gives them, into
        the lane slot reserved now, after the backward. False (nothing kept) for a view
        whose span is far larger than its values (or with a negative stride)."""
        if any(s < 0 for s in strides):
            return False
        span = 1 + sum((d - 1) * s for d, s in zip(shape, strides))  # elements
        if span > 4 * n:
            return False
        if self._side_used + span > self._side.size:
            grown = np.empty(2 * (self._side_used + span), np.float32)
            grown[: self._side_used] = self._side[: self._side_used]
            self._side = grown
        _memmove(self._side.ctypes.data + 4 * self._side_used, address, 4 * span)
        lane = self._lane(n)
        at = lane.room(row)  # in lane.chunk, which is (or becomes) full[len(full)]
        strides = tuple(strides)
        self._strided.append((lane, len(lane.full), at, self._side_used, shape, strides))
        self._side_used += span
        return True

    def _gather(self) -> None:
        """The strided gradients' values, into the lane slots reserved for them: those of one
        layout (shape and strides: a few on a model) gathered by one index array at once."""
        side = self._side
        layouts: dict[tuple[Any, ...], list[Any]] = {}
        for entry in self._strided:
            layouts.setdefault(entry[4:], []).append(entry)
        for (shape, strides), entries in layouts.items():
            span = 1 + sum((d - 1) * s for d, s in zip(shape, strides))
            offsets = np.arange(span, dtype=np.int64)
            # each element's offset in the span, in C order
            index = np.lib.stride_tricks.as_strided(
                offsets, shape, [8 * s for s in strides], writeable=False
            ).reshape(-1)
            starts = np.fromiter((e[3] for e in entries), np.int64, len(entries))
            values = side[starts[:, None] + index]
            n = index.size
            for (lane, block, at, *_), row in zip(entries, values):
                dest = lane.full[block] if block < len(lane.full) else lane.chunk
                dest[at : at + n] = row
        self._strided.clear()
        self._side_used = 0

    def fill(self, out: np.ndarray) -> None:
        """Write each gradient's six raw statistics into its row of ``out``."""
        self._gather()
        # A model sends many gradients of a few sizes: those of one size (GROUP_MIN or more)
        # are reduced along the rows of their lane's blocks of up to BLOCK elements. Small
        # blocks stay in the cache and in malloc's heap: one flat array of all (~3M elements
        # on llama-10k) had its ~40 MB of temporaries paged in afresh each capture.
        rest: list[int] = []
        views: list[np.ndarray] = []
        for n in sorted(self._lanes):  # sizes ascending, rows ascending within one
            lane = self._lanes[n]
            if len(lane.rows) < GROUP_MIN:
                rest += lane.rows
                views += lane.views()
                continue
            for rows, block in lane.blocks():
                out[rows, :6] = _block_rows(block)
        if rest:  # sizes seen a few times: laid end to end, reduced by segment
            sizes = np.asarray([v.size for v in views], np.int64)
            out[rest, :6] = _segment_rows(np.concatenate(views), sizes)
        self._lanes.clear()  # (the statistics hooks hold this dict)


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
    """[norm, max_abs, abs_sum, zeros, nan, non-finite] of each row of a 2-D float32 block
    (a lane's: changed in place), over the finite elements. Each row's sum of |x| first: in
    float64 a sum of float32 values cannot overflow, so only a block whose sums are not all
    finite holds a NaN/Inf and has its elements checked; the squares' overflow check reads
    the rows' maxima (two passes over the block fewer than _segment_rows's, the same rows)."""
    a = block.astype(np.float32, copy=False)
    np.abs(a, out=a)
    res = np.zeros((len(a), 6))
    total = a.sum(axis=1, dtype=np.float64)
    if not np.isfinite(total).all():
        finite = np.isfinite(a)
        res[:, 4] = np.isnan(a).sum(axis=1)
        res[:, 5] = (~finite).sum(axis=1)
        a[~finite] = 0
        total = a.sum(axis=1, dtype=np.float64)
    res[:, 1] = a.max(axis=1)
    # Squares in float32 unless one could overflow there (|x| >= 2^63): as _squares
    big = res[:, 1].max() >= 2.0**63
    squares = np.square(a, dtype=np.float64) if big else np.square(a)
    res[:, 0] = np.sqrt(squares.sum(axis=1, dtype=np.float64))
    tiny = _tiny_rows(res)
    if tiny.size:
        res[tiny, 0] = np.sqrt(np.square(a[tiny], dtype=np.float64).sum(axis=1))
    res[:, 2] = total
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
