"""GradSummary's per-step reading in one compiled call (grad_kernel.py), when every parameter
is a float32/float64 CPU tensor: a step costs ``p.grad``, ``data_ptr()`` and a dtype check
per parameter, and that call. The numbers are those of the NumPy path (summary.py): the
same max |g| bit for bit, norms summed in float64 (at least as close as NumPy's float32 dot),
and a gradient with NaN/Inf (or an overflowing sum of squares) read by NumPy exactly.
"""

from __future__ import annotations

import array
import ctypes
import math
from typing import Any

import numpy as np

from .grad_kernel import kernel
from .helper_thread import HelperThread
from .in_place import readable_in_place
from .read_halves import ReadHalves, cut_at

_KIND = {np.float32: 0, np.float64: 1}
_NO_LOSS = 2  # read_grads' loss_kind: none to read
KEPT = 256  # addresses known readable, per (size, dtype), before the set starts afresh


class CompiledRead:
    """``read(grads, loss)``: (norm, max_abs, nan, inf, loss value, clean) or None (some
    gradient is not read in place: the caller takes the NumPy path for this step).
    ``clean``: every parameter has a gradient, all finite."""

    def __init__(
        self, plain: list[tuple[Any, Any, int, list[int]]], big: Any, helper: HelperThread
    ) -> None:
        import paddle

        n = len(plain)
        self._kernel = kernel("read_upto")
        self._plain = plain
        self._exact = big  # GradSummary._big: the exact reading of one gradient
        self._dtypes = [p[0] for p in plain]
        self._shapes = [p[3] for p in plain]
        # array.array, not NumPy: ten item assignments a step through NumPy's indexing
        # machinery cost more (its code is cold after Paddle's step) than the plain C setter
        self._addrs = array.array("q", bytes(8 * n))
        self._sizes = np.array([p[2] for p in plain], np.int64)
        self._kinds = np.array([_KIND[p[1]] for p in plain], np.int8)
        self._out = np.zeros((4, n))
        self._flags = np.zeros(n, np.int8)
        self._loss = ctypes.c_double()
        self._loss_kinds = {paddle.float32: 0, paddle.float64: 1}
        # by identity first (dtypes are singletons): hashing a Paddle dtype for the dict costs
        # ~1 us hot (pybind's __hash__), several after Paddle's step
        self._f32, self._f64 = paddle.float32, paddle.float64
        self._loss_known: tuple[set[int], set[int]] = (set(), set())  # CPU addresses, by kind
        # Addresses already checked (dense, contiguous, this shape, on the CPU), one set per
        # (size, dtype): the allocator hands a buffer from one parameter to another its size.
        sets: dict[tuple[int, Any], set[int]] = {}
        self._known = [sets.setdefault((p[2], p[1]), set()) for p in plain]
        self._args = (self._addrs.buffer_info()[0], self._sizes.ctypes.data,
                      self._kinds.ctypes.data, n, self._out.ctypes.data,
                      self._flags.ctypes.data)  # fmt: skip
        self._loss_at = ctypes.addressof(self._loss)
        # A big model's gradients: read by two threads before the kernel's call, which then
        # reads those below ``stop`` (none) and counts the flags of the rest
        cut = cut_at([p[2] for p in plain])
        self._halves = ReadHalves(kernel("read_part"), n, cut, helper) if cut else None
        self.stop = 0 if cut else n

    def read(self, grads: list[Any], loss: Any) -> tuple[Any, ...] | None:
        absent = self.addresses(grads)
        if absent is None:
            return None
        loss_addr, loss_kind, value = self.loss_address(loss)
        self.read_halves()
        bad = self._kernel(*self._args, loss_addr, loss_kind, self._loss_at, self.stop)
        return self.result(bad, absent, self.loss_read(loss_kind, value))

    def read_halves(self) -> None:
        """A big model's gradients read by two threads (read_halves.py), after addresses()."""
        if self._halves is not None:
            self._halves.read(self._args)

    def frame_head(self) -> tuple[int, ...]:
        """read_grads' array addresses and count, then the loss's double (step_ir.py's frame;
        its slot 18 is ``stop``)."""
        return (*self._args, self._loss_at)

    def addresses(self, grads: list[Any]) -> int | None:
        """Each gradient's address into the kernel's array (0: none this step); the number of
        parameters without one, or None: some gradient is not read in place."""
        addrs, known, dtypes, shapes = self._addrs, self._known, self._dtypes, self._shapes
        absent = 0
        for i, g in enumerate(grads):
            if g is None:
                addrs[i] = 0
                absent += 1
                continue
            ptr = g.data_ptr()
            if ptr in known[i] and g.dtype is dtypes[i] and g.shape == shapes[i]:
                addrs[i] = ptr  # (in_place.py: an address seen, still the same tensor kind)
                continue
            if not ptr:
                if g._is_initialized():
                    return None  # nothing to read in place
                addrs[i] = 0  # an uninitialized gradient: none this step
                absent += 1
                continue
            # a new address (most of them on a big model: the allocator rarely hands a
            # gradient the same buffer twice)
            if not readable_in_place(g, dtypes[i], shapes[i]):
                return None
            if len(known[i]) >= KEPT:
                known[i].clear()
            known[i].add(ptr)
            addrs[i] = ptr
        return absent

    def loss_read(self, loss_kind: int, value: float | None) -> float | None:
        """The loss value after the kernel's call (read by it, or given by loss_address)."""
        return self._loss.value if loss_kind != _NO_LOSS else value

    def result(self, bad: int, absent: int, value: float | None) -> tuple[Any, ...]:
        """read()'s answer from the kernel's output (``bad`` gradients flagged)."""
        out = self._out.copy()
        if bad:
            self._read_exactly(out)
        return out[0], out[1], out[2], out[3], value, not bad and not absent

    def loss_address(self, loss: Any) -> tuple[int, int, float | None]:
        """(address, kind, None) of a one-element float32/float64 CPU loss for the kernel;
        (0, none, its value) for any other (summary.loss_value)."""
        if loss is None:
            return 0, _NO_LOSS, None
        try:
            dtype = loss.dtype
            kind = (0 if dtype is self._f32 else 1 if dtype is self._f64
                    else self._loss_kinds.get(dtype))  # fmt: skip
            if kind is not None and math.prod(loss.shape) == 1:
                ptr = loss.data_ptr()
                # an address seen before is a CPU one (as the gradients': the place is
                # checked once per address, a Place made per call costs microseconds)
                known = self._loss_known[kind]
                if ptr and (ptr in known or self._cpu_loss(loss, ptr, known)):
                    return ptr, kind, None
        except (AttributeError, RuntimeError, TypeError, ValueError):
            pass
        from .summary import loss_value

        return 0, _NO_LOSS, loss_value(loss)

    @staticmethod
    def _cpu_loss(loss: Any, ptr: int, known: set[int]) -> bool:
        if not (loss.place.is_cpu_place() and loss.is_dense()):
            return False
        if len(known) >= KEPT:
            known.clear()
        known.add(ptr)
        return True

    def _read_exactly(self, out: np.ndarray) -> None:
        """The flagged gradients (NaN/Inf, or squares that overflow) read by NumPy."""
        for i in np.flatnonzero(self._flags):
            _, np_dtype, numel, _ = self._plain[i]
            memory = ctypes.c_char * (numel * np.dtype(np_dtype).itemsize)
            a = np.frombuffer(memory.from_address(int(self._addrs[i])), np_dtype)
            with np.errstate(all="ignore"):
                out[:, i] = self._exact(a)
