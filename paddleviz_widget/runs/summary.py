"""The per-step gradient summary: L2 norm, max |g|, NaN and Inf counts of every parameter's
gradient, read after backward without touching it.

CPU gradients are read in place through DLPack by NumPy: a sum of squares (BLAS dot), a max and
a min per chunk, which is all a finite gradient needs; only a gradient whose sum of squares is
not finite is read again to count its NaN/Inf exactly (cpu_reduce.array_stats). Gradients on
other devices are reduced there (grad_stats' tensor ops) and the results stacked into one
tensor: one host copy per step, no synchronisation per parameter. Norms and max |g| are over
the finite elements, as trace(stats=True) gives them on the graph's edges.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tracer.capture.cpu_reduce import CHUNK, array_stats
from ..tracer.capture.grad_stats import _reduce as reduce_on_device


class GradSummary:
    """``read()``: (norm, max_abs, nan, inf) arrays over ``params``, NaN norm for a parameter
    without a gradient this step; and ``loss_value(t)``."""

    def __init__(self, params: list[Any]) -> None:
        self.params = params
        self._scratch: dict[Any, np.ndarray] = {}

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        import paddle

        n = len(self.params)
        out = np.full((4, n), np.nan)
        on_device: list[tuple[int, Any, Any]] = []
        for i, p in enumerate(self.params):
            g = p.grad
            if g is None or not g._is_initialized():
                continue
            row = self._cpu(paddle, g) if g.place.is_cpu_place() else None
            if row is None:
                sizes, counts = reduce_on_device(paddle, g)
                on_device.append((i, sizes, counts))
            else:
                out[:, i] = row
        if on_device:  # one copy to the host for all of them
            with paddle.no_grad():
                flat = paddle.concat(
                    [paddle.concat([s, c.astype("float64")]) for _, s, c in on_device]
                )
            rows = np.asarray(flat.cpu().numpy(), np.float64).reshape(-1, 6)
            for (i, _, _), r in zip(on_device, rows):
                out[:, i] = [r[0], r[1], r[4], r[5] - r[4]]
        return out[0], out[1], out[2], out[3]

    def _cpu(self, paddle: Any, g: Any) -> list[float] | None:
        if g.dtype not in (paddle.float32, paddle.float64):
            return None  # bfloat16/float16: NumPy cannot read them; the tensor-op path can
        try:
            a = np.from_dlpack(g.detach()).reshape(-1)
        except (BufferError, TypeError, RuntimeError):
            return None
        if a.size == 0:
            return [0.0, 0.0, 0.0, 0.0]
        squares, top = 0.0, 0.0
        for k in range(0, a.size, CHUNK):  # each chunk read three times while in cache
            c = a[k : k + CHUNK]
            squares += float(np.dot(c, c))
            top = max(top, float(np.maximum.reduce(c)), -float(np.minimum.reduce(c)))
        if math.isfinite(squares):
            return [math.sqrt(squares), top, 0.0, 0.0]
        # NaN/Inf, or finite values whose squares overflow: the exact account
        norm, max_abs, _, _, nan, nonfinite = array_stats(a, self._buffer(a.dtype))
        return [norm, max_abs, nan, nonfinite - nan]

    def _buffer(self, dtype: Any) -> np.ndarray:
        held = self._scratch.get(dtype)
        if held is None:
            held = self._scratch[dtype] = np.empty(CHUNK, dtype)
        return held


def loss_value(t: Any) -> float | None:
    """The value of a one-element loss tensor (None for anything else)."""
    import paddle

    try:
        if t is None or int(t.size) != 1:
            return None
        if t.place.is_cpu_place() and t.dtype in (paddle.float32, paddle.float64):
            return float(np.from_dlpack(t.detach()).reshape(-1)[0])
        return float(t.detach().astype("float64").cpu().numpy().reshape(-1)[0])
    except (AttributeError, RuntimeError, TypeError, ValueError, BufferError):
        return None
