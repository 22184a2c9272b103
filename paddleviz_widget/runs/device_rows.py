"""The per-step summary's gradients that are not read in place (another device, or Paddle
without the in-place API): reduced where they live by grad_stats' tensor ops, then brought
to the host in one copy per device, the step's loss riding along in its device's copy. A
loss read on its own would be a second copy, and on an accelerator a second wait for it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tracer.capture.grad_stats import _reduce as reduce_on_device

NOT_READ = object()  # the loss was not in any copy: read it the usual way


def one_element(t: Any) -> Any:
    """``t`` when it is a one-element tensor with a value (the loss), else None."""
    try:
        # math.prod of the shape, not t.size: Tensor.size runs an op (~30 us after a step)
        if t is None or math.prod(t.shape) != 1 or not t._is_initialized():
            return None
    except (AttributeError, RuntimeError, TypeError, ValueError):
        return None
    return t


def device_rows(
    paddle: Any, grads: list[tuple[int, Any]], loss: Any
) -> tuple[list[tuple[int, list[float]]], Any]:  # fmt: skip
    """(index, [norm, max_abs, nan, inf]) of each (index, gradient), and the loss's value
    (None: no loss; NOT_READ: not read here). One host copy per device the gradients are on."""
    by_place: dict[str, list[tuple[int, Any]]] = {}
    for i, g in grads:
        sizes, counts = reduce_on_device(paddle, g)
        row = paddle.concat([sizes, counts.astype("float64")])
        by_place.setdefault(str(row.place), []).append((i, row))
    kept = one_element(loss)
    value: Any = None if kept is None else NOT_READ
    rows: list[tuple[int, list[float]]] = []
    for place, reduced in by_place.items():
        parts = [r for _, r in reduced]
        ride = value is NOT_READ and str(kept.place) == place
        if ride:
            try:  # an odd loss (a dtype no cast takes) is read the usual way instead
                parts.append(kept.detach().astype("float64").reshape([1]))
            except (RuntimeError, TypeError, ValueError):
                ride = False
        host = np.asarray(paddle.concat(parts).cpu().numpy(), np.float64)
        if ride:
            value, host = float(host[-1]), host[:-1]
        for (i, _), r in zip(reduced, host.reshape(-1, 6)):
            rows.append((i, [r[0], r[1], r[4], r[5] - r[4]]))
    return rows, value
