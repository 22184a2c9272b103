"""Work around a reference leak in Paddle's GradNode post hooks.

A post hook must return the gradients it was given, and Paddle (3.0-3.3 at least) never
releases the list or tuple a hook returns: that container, and with it every gradient in it,
stays in memory after the backward. Measured on ResNet-18 (64x64, batch 8): +68 MB per
training step under ``trace(stats=True)``, 23 GB after 500 steps. The leaked reference is the
container's only (its tensors are referenced by the container alone), so the hooks of one
backward all return one list of ours (``HookResults``), holding the latest call's gradients
alone: each call replaces the previous call's (Paddle has long turned them into its own
tensors by then), and when the backward ends the list is emptied and every leaked reference
given back; the gradients go as they would without us. (One list, not one per call: ~8k calls
a llama-10k backward, each with a list made and a reference given back by ctypes, cost ~3 us.)

Whether this Paddle leaks is measured once per process on a throwaway two-op graph, not
assumed from its version; and the list's reference count is read before references are given
back: only those beyond ours are, so a Paddle that does not leak never sees one dropped.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from functools import lru_cache
from typing import Any

from .vlog import vlog_silenced

# sys.getrefcount of a result list in _give_back: our holder + the local name + getrefcount's
# argument; one more is Paddle's leaked reference.
_OURS = 3
# Py_DecRef with its argument type bound once: ~1 us less per call than
# ctypes.pythonapi.Py_DecRef(ctypes.py_object(x)), once per hook call (8k a llama-10k backward).
_decref = (
    ctypes.PYFUNCTYPE(None, ctypes.py_object)(("Py_DecRef", ctypes.pythonapi))
    if hasattr(ctypes, "pythonapi")
    else None
)


@lru_cache(maxsize=1)
def results_leak() -> bool:
    """Whether the list a post hook returns outlives the backward (one probe per process: a
    2x2 tensor of ones, its own throwaway graph)."""
    import paddle

    # The module's own function: trace() swaps Tensor.backward and paddle.autograd.backward
    # and would count this one; silenced, since it may run inside the log capture of the
    # user's backward.
    from paddle.autograd.backward_mode import backward

    held: list[list[Any]] = []

    def hook(grad_outputs: Any, grad_inputs: Any) -> Any:
        held.append(list(grad_outputs))
        return held[-1]

    with vlog_silenced():
        x = paddle.ones([2, 2])
        x.stop_gradient = False
        y = (x * 2.0).sum()
        handle = y.grad_fn.next_functions[0]._register_post_hook(hook)
        try:
            backward([y])
        finally:
            handle.remove()
        del x, y
    gc.collect()
    leaked = [_leaked(held, k) for k in range(len(held))]
    for k in range(len(held)):  # the probe's own leak, given back the same way
        _give_back(held, k)
    return any(leaked)


def _leaked(held: list[Any], k: int) -> bool:
    result = held[k]
    return sys.getrefcount(result) > _OURS


def _give_back(held: list[Any], k: int) -> None:
    result = held[k]
    # Only a list that still holds a reference beyond ours: one that does not was not
    # leaked, and dropping a reference it does not owe would free a live object.
    if sys.getrefcount(result) > _OURS and _decref is not None:
        _decref(result)


class HookResults:
    """The list our post hooks return: one list for every call of one backward, its contents
    the gradients of the latest call (``result[:] = grad_outputs``: Paddle has made the
    previous call's into its own tensors by then, so they go as they would without us). Paddle
    keeps one reference per call to it; ``release()``, once the backward has ended (the hooks
    removed), gives back every reference beyond ours. ``result`` is None on a Paddle that does
    not leak: the hooks then return what they were given."""

    def __init__(self) -> None:
        self.result: list[Any] | None = [] if results_leak() else None
        self._ours = sys.getrefcount(self.result)  # before any hook ran: no reference of Paddle's

    def held(self) -> None:
        """The hooks now hold the list too (their closure's cell, made once): counted as ours."""
        self._ours = sys.getrefcount(self.result)

    def release(self, calls: int) -> None:
        """``calls``: how many times a hook returned the list (Paddle kept at most that many
        references: never more are given back, whoever else holds it meanwhile)."""
        result = self.result
        if result is None:
            return
        result.clear()  # the last call's gradients
        # result's refcount less this name's and getrefcount's own: what is held beyond ours
        extra = min(sys.getrefcount(result) - 1 - self._ours, calls)
        if extra <= 0:
            return
        if _refcount_in_place():  # ~8k references a llama-10k backward: one write, not 8k calls
            count = ctypes.c_ssize_t.from_address(id(result))
            count.value -= extra
        elif _decref is not None:
            for _ in range(extra):
                _decref(result)


@lru_cache(maxsize=1)
def _refcount_in_place() -> bool:
    """Whether an object's reference count is the Py_ssize_t at its address (CPython's
    layout with the GIL), so that giving back many references is one write: checked on a
    throwaway list (its count read there must follow sys.getrefcount as references come and
    go), not assumed from the version."""
    if not hasattr(ctypes, "pythonapi") or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return False
    probe: list[Any] = []
    count = ctypes.c_ssize_t.from_address(id(probe))
    seen = [count.value == sys.getrefcount(probe) - 1]
    more = [probe] * 5
    seen.append(count.value == sys.getrefcount(probe) - 1)
    more.clear()
    seen.append(count.value == sys.getrefcount(probe) - 1)
    return all(seen)
