"""The per-step gradient summary: L2 norm, max |g|, NaN and Inf counts of every parameter's
gradient, read after backward without touching it.

CPU gradients are read in place by NumPy: a sum of squares, a max and a min, which is all a
finite gradient needs; only a gradient whose sum of squares is not finite is read again to
count its NaN/Inf exactly (cpu_reduce.array_stats). Gradients on
other devices are reduced there (grad_stats' tensor ops) and the results stacked into one
tensor: one host copy per step (per device), the loss in it (device_rows.py), no
synchronisation per parameter. Norms and max |g| are over
the finite elements, as trace(stats=True) gives them on the graph's edges.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from ..tracer.capture.cpu_reduce import CHUNK, SPLIT_FROM, TINY, array_stats
from ..tracer.capture.sparse_grads import merged_rows
from .compiled_read import CompiledRead
from .device_rows import NOT_READ, device_rows
from .grad_kernel import kernel
from .helper_thread import HelperThread
from .in_place import readable_in_place

_dot, _max, _min = np.dot, np.maximum.reduce, np.minimum.reduce
# Gradients of up to this many elements are reduced together (where NumPy's per-call cost
# dominates); bigger ones one by one (BLAS dot, max, min: faster than a copy and a reduceat).
SMALL = 1 << 12
_NUMPY = {"float32": np.float32, "float64": np.float64}
VIEWS_KEPT = 8  # addresses per parameter whose gradient views are kept


def _IN_PLACE_API(paddle: Any) -> bool:  # noqa: N802
    """Tensor.data_ptr/is_contiguous/is_dense exist (Paddle 3.x); else the tensor-op path."""
    return all(hasattr(paddle.Tensor, name) for name in ("data_ptr", "is_contiguous", "is_dense"))


class GradSummary:
    """``read()``: (norm, max_abs, nan, inf) arrays over ``params``; NaN norm and max_abs
    (and 0 NaN/Inf) for a parameter without a gradient this step.

    A dense float32/float64 CPU gradient is read in place at its address (what DLPack hands
    NumPy too, for a sixth of the cost per tensor: models have hundreds of small gradients).
    The small ones are copied into one buffer and reduced by segment (np.*.reduceat): four
    NumPy calls per step instead of four per parameter."""

    def __init__(self, params: list[Any], *, in_place: bool = True, compiled: bool = True) -> None:
        """``in_place=False``: every gradient through the tensor ops (other devices' path);
        ``compiled=False``: never the one-call reading of compiled_read.py."""
        import paddle

        self.params = params
        self._scratch: dict[Any, np.ndarray] = {}
        self._helper = HelperThread()  # the second thread of both reading paths
        # Per parameter: (paddle dtype, NumPy dtype, element count, shape) when its gradient
        # can be read in place (a float32/float64 parameter on the CPU), else None.
        self._plain: list[tuple[Any, Any, int, list[int]] | None] = []
        for p in params:
            np_dtype = _NUMPY.get(str(p.dtype).replace("paddle.", ""))
            cpu = p.place.is_cpu_place()
            shape = list(p.shape)
            numel = int(np.prod(shape)) if shape else 1
            readable = in_place and cpu and np_dtype is not None and _IN_PLACE_API(paddle)
            self._plain.append((p.dtype, np_dtype, numel, shape) if readable else None)
        self._paddle = paddle
        # Per parameter: the views of its gradient read in place, by address. Paddle's backward
        # gives a parameter a new gradient buffer most steps, from a few addresses its
        # allocator reuses: a view made for an address reads whatever gradient of that
        # parameter (same size and dtype) is there now. VIEWS_KEPT addresses at most.
        self._views: list[dict[int, np.ndarray]] = [{} for _ in params]
        # The same by (address, element count, NumPy dtype), shared by all parameters (the
        # in-place path): the allocator hands one parameter's old buffer to another of its
        # size (the MLP's 10 gradients came from 69 addresses in 60 steps, ~18 each: a view
        # per parameter and address was made afresh ~4 times a step).
        self._shared: dict[tuple[int, int, Any], np.ndarray] = {}
        self._shared_kept = max(256, VIEWS_KEPT * len(params))  # ~300 B each
        self._memory: list[Any] = [None] * len(params)  # ctypes array type of its bytes
        self._plan: tuple[tuple[int, ...], Any] | None = None  # the small ones' segments
        self._steady: _Steady | None = None  # which are big and small, while the same are read
        self._compiled: CompiledRead | None = None
        self._compile = compiled and all(p is not None for p in self._plain)
        self._compile = self._compile and bool(params)
        if self._compile:
            self._compiled_now()  # starts the compiling (a helper thread) if not done yet

    def _compiled_now(self) -> bool:
        """Whether the compiled reading is there (the NumPy path reads until it is)."""
        fn = kernel(wait=False)
        if fn is None:
            return False
        self._compiled = CompiledRead(self._plain, self._big, self._helper)  # type: ignore[arg-type]
        self._compile = False
        return True

    @property
    def compiles(self) -> bool:
        """Whether the one-call reading is there or may come (compiled on a helper thread)."""
        return self._compiled is not None or self._compile

    def compiled_read(self) -> CompiledRead | None:
        """The one-call reading (compiled_read.py), once compiled; None: the NumPy path."""
        if self._compiled is None and self._compile:
            self._compiled_now()
        return self._compiled

    def read_step(self, loss: Any) -> tuple[Any, ...]:
        """read() and the loss value (loss_value(loss); None: no loss), and whether the step
        is clean (every parameter has a gradient, all finite; False: not known): one
        compiled call when it can (compiled_read.py)."""
        if self._compiled is not None or (self._compile and self._compiled_now()):
            assert self._compiled is not None
            grads = [p.grad for p in self.params]  # referenced until they are read
            got = self._compiled.read(grads, loss)
            if got is not None:
                return got
        norm, max_abs, nan, inf, value = self._read_with(loss)
        return norm, max_abs, nan, inf, loss_value(loss) if value is NOT_READ else value, False

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self._read_with(None)[:4]

    def _read_with(self, loss: Any) -> tuple[Any, ...]:
        """read(), and the loss's value when it came in the gradients' host copy (else
        NOT_READ)."""
        grads = [p.grad for p in self.params]  # referenced until they are read
        views = self._views_now(grads)
        value: Any = NOT_READ
        if views is None:  # some gradient is not read in place: the general path
            with self._paddle.no_grad():  # its tensor ops record no graph
                out, value = self._read(grads, loss)
        else:
            steady = self._steady
            if steady is None or not steady.fits(views):
                steady = self._steady = _Steady(views)
            with np.errstate(all="ignore"):  # overflowing squares are handled: no warning
                out = steady.read(self, views)
        return out[0], out[1], out[2], out[3], value

    def _views_now(self, grads: list[Any]) -> list[np.ndarray | None] | None:
        """Each gradient's in-place view (None: no gradient), or None if one cannot be."""
        views: list[np.ndarray | None] = []
        shared = self._shared
        for i, g in enumerate(grads):
            if g is None:
                views.append(None)
                continue
            ptr = g.data_ptr()
            plain = self._plain[i]
            if not ptr or plain is None:
                if g._is_initialized():
                    return None  # on another device, or nothing to read in place
                views.append(None)  # an uninitialized gradient: none this step
                continue
            key = (ptr, plain[2], plain[1])
            view = shared.get(key)
            if view is None or g.dtype is not plain[0] or g.shape != plain[3]:  # (in_place.py)
                view = self._fresh_view(i, g, ptr, plain)
                if view is None:
                    return None
                if len(shared) >= self._shared_kept:
                    shared.clear()
                shared[key] = view
            views.append(view)
        return views

    def _fresh_view(self, i: int, g: Any, ptr: int, plain: tuple[Any, ...]) -> np.ndarray | None:
        """_in_place's view with the ctypes type of its bytes kept (in_place.py's rule: a
        model moved to another device mid-run is never read at a device address)."""
        dtype, np_dtype, numel, shape = plain
        if not readable_in_place(g, dtype, shape):
            return None
        memory = self._memory[i]
        if memory is None:
            memory = self._memory[i] = ctypes.c_char * (numel * np.dtype(np_dtype).itemsize)
        return np.frombuffer(memory.from_address(ptr), np_dtype)

    def _read(self, grads: list[Any], loss: Any) -> tuple[np.ndarray, Any]:
        paddle = self._paddle
        n = len(self.params)
        out = np.zeros((4, n))
        out[:2] = np.nan  # norm, max_abs NaN: no gradient (NaN/Inf counts stay 0)
        on_device: list[tuple[int, Any]] = []
        small: dict[Any, list[tuple[int, np.ndarray]]] = {}
        big: list[tuple[int, np.ndarray]] = []
        keep = []  # the gradients read in place stay referenced until they are read
        for i, g in enumerate(grads):
            if g is None or not g._is_initialized():
                continue
            a = self._cached_view(i, g)
            if a is None and g.is_selected_rows():  # a sparse embedding's: its dense rows
                out[:, i] = self._big(merged_rows(paddle, g))
                continue
            if a is None:
                on_device.append((i, g))
                continue
            keep.append(g)
            if a.size <= SMALL:
                small.setdefault(None, []).append((i, a))
            else:
                big.append((i, a))
        with np.errstate(all="ignore"):  # overflowing squares are handled: no warning of ours
            for i, row in self._bigs(big):
                out[:, i] = row
            for group in small.values():
                self._small(group, out)
        del keep
        if not on_device:
            return out, NOT_READ
        rows, value = device_rows(paddle, on_device, loss)  # one host copy per device
        for i, row in rows:
            out[:, i] = row
        return out, value

    def _cached_view(self, i: int, g: Any) -> np.ndarray | None:
        plain = self._plain[i]
        if plain is None:
            return None
        held = self._views[i]
        ptr = g.data_ptr()
        view = held.get(ptr)
        same = view is not None and (g.dtype is plain[0] or g.dtype == plain[0])
        if same and g.shape == plain[3]:  # (in_place.py)
            return view
        view = self._in_place(g, plain)
        if view is not None:
            if len(held) >= VIEWS_KEPT:
                held.clear()
            held[ptr] = view
        return view

    def _in_place(self, g: Any, plain: tuple[Any, Any, int, list[int]] | None) -> Any:
        """A NumPy view of CPU gradient ``g``'s memory, or None (the tensor-op path)."""
        if plain is None:
            return None
        dtype, np_dtype, numel, shape = plain
        if not readable_in_place(g, dtype, shape):
            return None
        ptr = g.data_ptr()
        if not ptr:
            return None
        nbytes = numel * np.dtype(np_dtype).itemsize
        return np.frombuffer((ctypes.c_char * nbytes).from_address(ptr), np_dtype)  # type: ignore[call-overload]

    def _small(self, group: list[tuple[int, np.ndarray]], out: np.ndarray) -> None:
        """Many small gradients: one copy (of |x|), then per-segment sums of squares and max;
        few calls, as each costs tens of microseconds right after Paddle's backward (cold
        caches: benchmarks/RESULTS.md)."""
        key = tuple(i for i, _ in group)
        if self._plan is None or self._plan[0] != key:
            sizes = [a.size for _, a in group]
            starts = np.zeros(len(group), np.int64)
            np.cumsum(sizes[:-1], out=starts[1:])
            self._plan = (key, (sum(sizes), starts, np.array(key), min(sizes) == 0))
        total, starts, index, empty = self._plan[1]
        if empty:  # reduceat reads one element for an empty segment
            for i, a in group:
                out[:, i] = self._big(a)
            return
        buffer = self._buffer(np.float64, 2 * total)  # float64 sums, as the big ones get
        flat = np.concatenate([a for _, a in group], out=buffer[:total], casting="same_kind")
        np.abs(flat, out=flat)  # |x|: max |g| in one reduction (its copy, not the gradient)
        squares = np.multiply(flat, flat, out=buffer[total : 2 * total])
        sums = np.add.reduceat(squares, starts)
        top = np.maximum.reduceat(flat, starts)
        if math.isfinite(float(np.add.reduce(sums))):  # the usual step: all finite
            out[0, index] = np.sqrt(sums)
            out[1, index] = top
            return
        finite = np.isfinite(sums)
        out[0, index[finite]] = np.sqrt(sums[finite])
        out[1, index[finite]] = top[finite]
        for k in np.flatnonzero(~finite):  # NaN/Inf, or squares that overflow: exactly
            out[:, index[k]] = self._big(group[k][1])

    def _big(self, a: np.ndarray) -> list[float]:
        squares, top = 0.0, 0.0
        for k in range(0, a.size, CHUNK):  # each chunk is read three times while in cache
            c = a[k : k + CHUNK]
            squares += float(_dot(c, c))
            top = max(top, float(_max(c)), -float(_min(c)))
        # (a largest |g| under TINY: its float32 squares underflow, 1e-23s summed to a norm of
        # 0, an "idle" layer where a vanishing one was; array_stats scales them)
        if math.isfinite(squares) and not 0 < top < TINY:
            return [math.sqrt(squares), top, 0.0, 0.0]
        # NaN/Inf, finite values whose squares overflow or underflow: the exact account
        norm, max_abs, _, _, nan, nonfinite = array_stats(a, np.empty(CHUNK, a.dtype))
        return [norm, max_abs, nan, nonfinite - nan]

    def _bigs(self, big: list[tuple[int, np.ndarray]]) -> list[tuple[int, list[float]]]:
        """The big gradients, in two halves of about equal size when there is much to read:
        the second on a helper thread (after backward Paddle leaves the cores idle; NumPy's
        reductions run without the GIL)."""
        if len(big) < 2 or sum(a.size for _, a in big) < 4 * SPLIT_FROM:
            return [(i, self._big(a)) for i, a in big]
        halves: tuple[list[tuple[int, np.ndarray]], ...] = ([], [])
        load = [0, 0]
        for i, a in sorted(big, key=lambda item: -item[1].size):
            side = 0 if load[0] <= load[1] else 1
            halves[side].append((i, a))
            load[side] += a.size
        mine, theirs = self._helper.both(
            lambda: self._quietly(halves[0]), lambda: self._quietly(halves[1])
        )
        return mine + theirs

    def _quietly(self, items: list[tuple[int, np.ndarray]]) -> list[tuple[int, list[float]]]:
        with np.errstate(all="ignore"):  # per thread
            return [(i, self._big(a)) for i, a in items]

    def release(self) -> None:
        """Let the helper thread go (the run ended)."""
        self._helper.release()

    def _buffer(self, dtype: Any, size: int) -> np.ndarray:
        held = self._scratch.get(dtype)
        if held is None or held.size < size:
            held = self._scratch[dtype] = np.empty(max(size, CHUNK), dtype)
        return held


def loss_value(t: Any) -> float | None:
    """The value of a one-element loss tensor (None for anything else)."""
    try:
        # math.prod of the shape, not t.size: Tensor.size runs an op (~30 us after a step)
        if t is None or math.prod(t.shape) != 1:
            return None
        if t.place.is_cpu_place():
            return float(t.item())
        import paddle

        with paddle.no_grad():
            return float(t.detach().astype("float64").cpu().numpy().reshape(-1)[0])
    except (AttributeError, RuntimeError, TypeError, ValueError, BufferError):
        return None


class _Steady:
    """Which gradients are big and which small (segments of one copy), kept while the same
    parameters have a gradient: a step then costs a data_ptr() per parameter (and a view for
    an address not seen before) and the reductions."""

    def __init__(self, views: list[np.ndarray | None]) -> None:
        self.present = [v is not None for v in views]
        self.big = [i for i, v in enumerate(views) if v is not None and v.size > SMALL]
        self.small = [i for i, v in enumerate(views) if v is not None and v.size <= SMALL]
        self.template = np.zeros((4, len(views)))
        self.template[:2] = np.nan  # norm, max_abs NaN: no gradient
        sizes = [views[i].size for i in self.big]  # type: ignore[union-attr]
        # Big ones up to a chunk, not worth a second thread: three reductions each, no loop.
        self.direct = all(n <= CHUNK for n in sizes) and (
            len(sizes) < 2 or sum(sizes) < 4 * SPLIT_FROM
        )

    def fits(self, views: list[np.ndarray | None]) -> bool:
        return [v is not None for v in views] == self.present

    def read(self, summary: GradSummary, views: list[Any]) -> np.ndarray:
        out = self.template.copy()
        big = [(i, views[i]) for i in self.big]
        if self.direct:
            self._bigs(summary, big, out)
        else:
            for i, row in summary._bigs(big):
                out[:, i] = row
        if self.small:
            summary._small([(i, views[i]) for i in self.small], out)
        return out

    @staticmethod
    def _bigs(summary: GradSummary, big: list[tuple[int, np.ndarray]], out: np.ndarray) -> None:
        for i, a in big:
            squares = float(_dot(a, a))
            if math.isfinite(squares):
                top = max(float(_max(a)), -float(_min(a)))
                if not 0 < top < TINY:
                    out[0, i], out[1, i] = math.sqrt(squares), top
                    continue
            out[:, i] = summary._big(a)  # NaN/Inf, squares that overflow or underflow
