"""``grad_node_of(tensor)``: read ``Tensor.grad_fn`` without leaking the backward graph."""

from __future__ import annotations

import ctypes
import platform
import sys
from typing import Any

# Paddle's Tensor.grad_fn getter (ToPyObject(shared_ptr<GradNodeBase>) in eager_utils.cc) does
# py_obj.release() *and* Py_INCREF, so every access leaks one reference to the wrapper, which
# holds a shared_ptr to the node: the node, its edges and the activations it saved are never
# freed (one access on a model output leaks the whole backward graph). Measured once at
# runtime so that a Paddle which fixes the getter is left alone.
_leak_per_access: int | None = None
_decref: Any = None


def _measure_grad_fn_leak() -> int:
    import paddle

    probe = paddle.zeros([1])
    probe.stop_gradient = False
    out = probe * 2.0
    node = out.grad_fn
    refs = sys.getrefcount(node)
    out.grad_fn  # noqa: B018 - pybind hands back the same wrapper object: count what sticks
    leaked = sys.getrefcount(node) - refs
    if leaked == 1 and _decref is not None:
        _decref(node)  # undo the probe's own two leaks so it frees
        _decref(node)
    return leaked


def _measured() -> bool:
    """Whether each grad_fn read leaks one reference we can undo (measured once)."""
    global _leak_per_access, _decref
    if _leak_per_access is None:
        if platform.python_implementation() == "CPython":
            _decref = ctypes.PYFUNCTYPE(None, ctypes.py_object)(("Py_DecRef", ctypes.pythonapi))
        _leak_per_access = _measure_grad_fn_leak()
    return _leak_per_access == 1 and _decref is not None


def grad_node_of(tensor: Any) -> Any:
    """``tensor.grad_fn`` (a GradNode or None) without leaking it.

    Use this instead of ``.grad_fn`` anywhere the node should be freed with its graph.
    """
    undo = _measured() if _leak_per_access is None else _leak_per_access == 1 and _decref
    node = tensor.grad_fn
    if node is not None and undo:
        _decref(node)  # our local `node` keeps it alive; only the leaked reference goes
    return node


def grad_node_later(tensor: Any, leaked: list[Any]) -> Any:
    """``tensor.grad_fn`` as grad_node_of, its leaked reference undone later: the node goes
    into ``leaked`` (once per read) for release(). In a forward (each layer call's inputs and
    outputs, ~4,400 reads a llama-10k step) a ctypes call right after Paddle's ops costs
    ~1 us with cold caches; release() makes them all in one loop. Until then the node is
    held (``leaked`` holds it, besides the leaked reference): whoever calls this must call
    release() before forgetting ``leaked``, or the node and its whole graph leak."""
    undo = _measured() if _leak_per_access is None else _leak_per_access == 1 and _decref
    node = tensor.grad_fn
    if node is not None and undo:
        leaked.append(node)
    return node


def release(leaked: list[Any]) -> None:
    """Undo the leaked reference of each node grad_node_later put in ``leaked``, and empty it.
    The list is emptied first: a KeyboardInterrupt between the two leaks nodes (as Paddle's
    getter would) rather than undoing a reference twice (which would free a node in use)."""
    if leaked:
        batch = leaked.copy()
        leaked.clear()
        any(map(_decref, batch))  # (None each: ``any`` runs the calls in C, keeps nothing)


def has_grad_node(tensor: Any) -> bool:
    """``grad_node_of(tensor) is not None``, cheaply for a tensor made by an op: ``is_leaf``
    False means a grad node that is not an accumulation node (IsLeafTensor), so grad_fn is
    set (its getter answers None for an undefined tensor first: an initialized one is
    defined); ``is_leaf`` reads it without the getter's leak (grad_fn makes a wrapper and
    needs a ctypes decref: ~20 us right after a forward, is_leaf ~1). Any other tensor is
    asked grad_fn itself (Paddle 2.6/3.0 give an empty ``paddle.Tensor()`` a node object)."""
    if not tensor.is_leaf and tensor._is_initialized():
        return True
    return grad_node_of(tensor) is not None
