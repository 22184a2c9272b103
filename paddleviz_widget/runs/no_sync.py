"""Steps whose backward ran under ``paddle.DataParallel.no_sync()``: no all-reduce, so each
rank's gradients are its own on purpose (gradient accumulation: the micro-steps before the
synchronised one). The cross-rank report must not call them "unsynced"; what is a bug is an
optimizer step or ``clear_grad()`` on such gradients before a synchronised backward has
added them up. That is seen at the next backward's start: were the gradients left as that
step's backward made them (carried into the all-reduce), or cleared/replaced?

Recorded in run.json as ``no_sync``: ``[[step, carried], ...]``, ``carried`` true (added into
the next backward), false (cleared or changed before it) or null (the run ended first).
Paddle decides per forward (``grad_need_sync``); read here when the backward starts, so a
backward called outside the ``with model.no_sync():`` block that ran its forward is not seen.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np


def data_parallel_of(model: Any) -> Any:
    """The paddle.DataParallel that is ``model`` or wraps it (the CLI finds the inner layer:
    its wrapper is found among the objects referring to it, once per run); None if none."""
    try:
        from paddle import DataParallel
    except ImportError:  # pragma: no cover (paddle without distributed)
        return None
    if model is None or isinstance(model, DataParallel):
        return model
    # model <- the wrapper's _sub_layers (an OrderedDict) <- its __dict__ <- the wrapper
    level: list[Any] = [model]
    for _ in range(3):  # one pass over the collector's objects per level
        up = []
        for holder in gc.get_referrers(*level):
            if isinstance(holder, DataParallel) and holder._layers is model:
                return holder
            if isinstance(holder, dict):
                up.append(holder)
        if not up:
            break
        level = up
    return None


class NoSync:
    """What the watch asks around each backward of a DataParallel model."""

    def __init__(self, model: Any, tensors: list[Any]) -> None:
        self._dp = data_parallel_of(model)
        self._tensors = tensors
        self.steps: list[list[Any]] = []  # run.json's no_sync
        self._pending: tuple[int, int, float] | None = None  # step, parameter, its norm

    @property
    def watched(self) -> bool:
        return self._dp is not None

    def local(self) -> bool:
        """This backward runs without the all-reduce (inside ``no_sync()``)."""
        return self._dp is not None and not getattr(self._dp, "grad_need_sync", True)

    def before_backward(self) -> None:
        """After a local step: is its gradient still in .grad (one small parameter's, read)?"""
        if self._pending is None:
            return
        step, i, norm = self._pending
        self._pending = None
        grad = self._tensors[i].grad
        carried = False
        if grad is not None:
            g = np.asarray(grad.numpy(), np.float64).ravel()
            # over the finite elements, as the logged norm is: a NaN/Inf among them (a bad
            # micro-batch) made it NaN/Inf, "not carried", and the report said unsynced
            now = float(np.linalg.norm(g[np.isfinite(g)]))
            carried = bool(np.isclose(now, norm, rtol=1e-5, atol=0.0))
        self.steps.append([step, carried])

    def after_backward(self, step: int, norm: np.ndarray) -> None:
        """A local step's norms: the smallest parameter with a non-zero finite gradient is the
        one checked before the next backward (none: nothing to carry, said as carried)."""
        usable = [i for i, v in enumerate(norm) if np.isfinite(v) and v > 0]
        if not usable:  # no gradient to carry
            self.steps.append([step, True])
            return
        # Read by NumPy as it is: not bfloat16 (its .numpy() gives the raw uint16 bits)
        usable = [i for i in usable if _numpy_float(self._tensors[i])]
        if not usable:  # cannot tell: not claimed either way
            self.steps.append([step, None])
            return
        i = min(usable, key=lambda k: int(np.prod(self._tensors[k].shape)))
        self._pending = (step, i, float(norm[i]))

    def close(self) -> None:
        if self._pending is not None:  # the run ended after a local step
            self.steps.append([self._pending[0], None])
            self._pending = None


def _numpy_float(tensor: Any) -> bool:
    return str(tensor.dtype).rsplit(".", 1)[-1] in ("float16", "float32", "float64")
