"""Proof, without holding any GradNode, that a node at some address is still the one a trace saw.

A trace keys what it learned by ``node_ptr()``. Once a node is freed, a new node can take its
address (in a training loop, the next step's node of the same op usually does), so a pointer
alone proves nothing. A GradNode's Python wrapper is a throwaway, but a Tensor holds its
grad_fn node, and a node holds the nodes in its ``next_functions``. So while a tensor the trace
saw is alive (a weakref) and its grad_fn is still at the recorded address, that node has been
alive all along, and so has every node reachable from it: each of those addresses still means
the node the trace saw.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Iterable, Iterator, Mapping
from inspect import CO_OPTIMIZED
from typing import Any, NamedTuple

from ..read.grad_node import grad_node_of, has_grad_node


class Anchor(NamedTuple):
    tensor: weakref.ref[Any]
    ptr: int  # node_ptr() of the tensor's grad_fn when the trace saw it


def anchor_of(tensor: Any) -> Anchor | None:
    """A weak anchor on ``tensor``'s grad_fn, or None (no grad_fn, or no weakref support)."""
    if not is_tensor(tensor):
        return None
    node = grad_node_of(tensor)
    if node is None:
        return None
    try:
        return Anchor(weakref.ref(tensor), int(node.node_ptr()))
    except TypeError:
        return None


_tensor_class: list[type] = []  # paddle.Tensor, once imported


def is_tensor(obj: Any) -> bool:
    """isinstance, never ``hasattr(obj, "grad_fn")``: that getter leaks the node. The class
    is kept: ``from paddle import Tensor`` runs importlib's _handle_fromlist in Python each
    time (~10 us cold: every backward asks)."""
    if not _tensor_class:
        from paddle import Tensor

        _tensor_class.append(Tensor)
    return isinstance(obj, _tensor_class[0])


def has_graph(roots: list[Any]) -> bool:
    """Whether a backward from ``roots`` has a graph: some tensor among them has a grad node.
    The usual root (one tensor made by an op) in one attribute read."""
    if len(roots) == 1 and _tensor_class and type(roots[0]) is _tensor_class[0]:
        return has_grad_node(roots[0])
    return any(has_grad_node(t) for t in roots if is_tensor(t))


def live_node(anchor: Anchor) -> Any:
    """The anchored GradNode if its tensor lives and still points at it, else None."""
    tensor = anchor.tensor()
    if tensor is None:
        return None
    node = grad_node_of(tensor)
    return node if node is not None and int(node.node_ptr()) == anchor.ptr else None


def any_alive(anchors: Iterable[Anchor]) -> bool:
    return any(live_node(a) is not None for a in anchors)


_OWN_PACKAGES = ("paddleviz_widget", "paddle")
_MAX_ITEMS = 64  # per list/tuple/dict looked into: a user's outputs, not a data set


def user_tensors() -> list[Any]:
    """Tensors the user's code holds in variables: the calling frames' locals and globals,
    and one level into lists, tuples and dicts there (``outputs = [y1, y2]``). Paddle
    tensors are not tracked by the garbage collector, so this is where a ``y`` is found."""
    found: dict[int, Any] = {}
    scanned: set[int] = set()  # a module's globals serve many frames
    frame: Any = sys._getframe(1)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).split(".")[0] not in _OWN_PACKAGES:
            for values in (_local_values(frame), _global_values(frame, scanned)):
                found.update((id(t), t) for t in _tensors_in(values))
        frame = frame.f_back
    return list(found.values())


def _global_values(frame: Any, scanned: set[int]) -> list[Any]:
    if id(frame.f_globals) in scanned:
        return []
    scanned.add(id(frame.f_globals))
    return list(frame.f_globals.values())


def _local_values(frame: Any) -> list[Any]:
    """A frame's local values. Before Python 3.13, reading a function frame's f_locals
    leaves a snapshot dict on the frame that keeps every local alive until the function
    returns (a ``del y`` would no longer free y's graph): empty it again, unless someone
    else holds it (their own ``locals()``)."""
    local = frame.f_locals
    if local is frame.f_globals:  # module level: the namespace itself, scanned as globals
        return []
    values = list(local.values())
    snapshot = frame.f_code.co_flags & CO_OPTIMIZED and sys.version_info < (3, 13)
    if snapshot and type(local) is dict and sys.getrefcount(local) <= 3:  # frame, us, arg
        local.clear()
    return values


def _tensors_in(values: list[Any]) -> Iterator[Any]:
    for value in values:
        if is_tensor(value):
            yield value
        elif isinstance(value, (list, tuple, Mapping)) and len(value) <= _MAX_ITEMS:
            inner = value.values() if isinstance(value, Mapping) else value
            yield from (v for v in list(inner) if is_tensor(v))


def proven(anchors: Iterable[Anchor], wanted: Iterable[int]) -> set[int]:
    """Which ``wanted`` pointers are reachable from a live anchor, i.e. provably the nodes the
    trace saw. Stops walking as soon as all are found."""
    missing = set(wanted)
    found: set[int] = set()
    seen: set[int] = set()
    for a in anchors:
        node = live_node(a) if missing else None
        stack = [node] if node is not None else []
        while stack and missing:
            node = stack.pop()
            ptr = int(node.node_ptr())
            if ptr in seen:
                continue
            seen.add(ptr)
            if ptr in missing:
                missing.discard(ptr)
                found.add(ptr)
            stack.extend(n for n in node.next_functions if n is not None)
    return found
