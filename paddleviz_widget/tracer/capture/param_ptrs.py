"""Parameters' accumulation-node pointers, read once per parameter by a recorder.

A snapshot places each parameter's GradNodeAccumulation in its first owner's group
(layer_scopes._scopes): ~1,800 parameters a llama-10k capture, each read through Paddle's
grad_fn getter, name() and node_ptr() (~5 us each right after a backward, cold caches). A
leaf's accumulation node is made once, when it first needs one, and kept with the tensor for
its life (Paddle's GetGradAccumulationNode sets it only when there is none), so its pointer is
read once and kept with a weak reference to the parameter: a parameter freed, or replaced by
another object at the same id(), is read anew. ``stop_gradient`` is asked each time: a frozen
parameter has no gradient to place, as accumulation_ptr says.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

from ..read.params import accumulation_ptr

_MAX_KNOWN = 200_000  # parameters remembered at most (models made anew each step: forgotten)


class ParamPtrs:
    """id(parameter) -> (weak reference, its accumulation node's ptr), for one recorder."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[weakref.ref[Any], int]] = {}

    def of(self, param: Any) -> int | None:
        """accumulation_ptr(param), read from Paddle the first time only."""
        if param.stop_gradient:
            return None
        known = self._known.get(id(param))
        if known is not None and known[0]() is param:
            return known[1]
        ptr = accumulation_ptr(param)
        if ptr is not None:
            if len(self._known) >= _MAX_KNOWN:
                self._known.clear()
            with contextlib.suppress(TypeError):  # no weak references to it: read each time
                self._known[id(param)] = (weakref.ref(param), ptr)
        return ptr
