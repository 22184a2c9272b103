"""What a PyLayer node stands for: the layer a recompute node recomputes and the parameters
its backward graph hides.

Paddle's Python view of a GradNode gives only its name and edges. The PyLayer's context object
(``ctx``) is a live Python object, though, of class ``<PyLayer>_backward``; recompute keeps the
function it recomputes in ``ctx.run_function`` and saves the block's input tensors, whose
GradNodes are exactly the PyLayer node's ``next_functions``. A node is described only when one
context alone matches it that way; otherwise it stays a plain PyLayer node.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...graph.model import ParamInfo
from .grad_node import grad_node_of
from .params import accumulation_ptr
from .replay_safety import PYLAYER_PREFIX, pylayer_label
from .tensor_info import dtype_name
from .walk import WalkResult, next_ptrs


@dataclass(frozen=True)
class PyLayerInfo:
    ptr: int
    cls: str  # the PyLayer class, e.g. "RecomputeFunction"
    layer: str | None = None  # path of the layer it recomputes in the model, e.g. "model.layers.0"
    layer_type: str | None = None
    hidden: tuple[ParamInfo, ...] = ()  # trainable parameters whose GradNodes it hides


def _contexts() -> list[Any]:
    try:
        from paddle.autograd.py_layer import PyLayerBackward
    except ImportError:  # pragma: no cover - every Paddle this package supports has it
        return []
    return [o for o in gc.get_objects() if isinstance(o, PyLayerBackward)]


def _saved_ptrs(ctx: Any) -> frozenset[int]:
    import paddle

    try:
        saved = ctx.saved_tensor() or ()
    except (AttributeError, RuntimeError, ValueError):  # released, or saved nothing
        return frozenset()
    # isinstance, not hasattr(t, "grad_fn"): that getter leaks the node (read/grad_node.py).
    nodes = (grad_node_of(t) for t in saved if isinstance(t, paddle.Tensor))
    return frozenset(int(n.node_ptr()) for n in nodes if n is not None)


def _layer_of(function: Any) -> Any:
    import paddle

    while isinstance(function, functools.partial):
        function = function.func
    owner = getattr(function, "__self__", None)  # a bound forward
    for candidate in (function, owner):
        if isinstance(candidate, paddle.nn.Layer):
            return candidate
    return None


def _hidden_params(layer: Any, path: str | None, shown: frozenset[int]) -> tuple[ParamInfo, ...]:
    """The layer's trainable parameters but those with a node of their own in the graph
    (``shown``: its accumulation nodes): recompute(self.block, h), a method of the model,
    recomputes the model's layer but hides only what that method used."""
    prefix = f"{path}." if path else ""
    return tuple(
        ParamInfo(f"{prefix}{name}", tuple(int(d) for d in p.shape), dtype_name(p.dtype))
        for name, p in layer.named_parameters()
        if not p.stop_gradient and accumulation_ptr(p) not in shown
    )


def describe_pylayers(walk: WalkResult, model: Any = None) -> list[PyLayerInfo]:
    """One entry per PyLayer node of ``walk`` (none if it has none: no scan of live objects)."""
    # is_pylayer, asked per distinct name first (a graph has ~10k nodes of a few dozen names)
    if not any(name.startswith(PYLAYER_PREFIX) for name in {n.name for n in walk.nodes}):
        return []
    pylayers = [n for n in walk.nodes if n.name.startswith(PYLAYER_PREFIX)]
    nexts = next_ptrs(walk)
    paths: Mapping[int, str] = (
        {id(layer): name for name, layer in model.named_sublayers(include_self=True)}
        if model is not None
        else {}
    )
    by_inputs: dict[tuple[str, frozenset[int]], list[Any]] = {}
    for ctx in _contexts():
        cls = type(ctx).__name__.removesuffix("_backward")
        by_inputs.setdefault((cls, _saved_ptrs(ctx)), []).append(ctx)
    found = []
    for node in pylayers:
        cls = pylayer_label(node.name)
        inputs = frozenset(p for p in nexts.get(node.ptr, ()) if p is not None)
        matches = by_inputs.get((cls, inputs), [])
        layer = _layer_of(getattr(matches[0], "run_function", None)) if len(matches) == 1 else None
        if layer is None:
            found.append(PyLayerInfo(node.ptr, cls))
            continue
        path = paths.get(id(layer))
        hidden = _hidden_params(layer, path, walk.accumulation)
        found.append(PyLayerInfo(node.ptr, cls, path, type(layer).__name__, hidden))
    return found


def recompute_notice(infos: list[PyLayerInfo], unseen_params: int | None = None) -> str | None:
    """One line: what recompute hides, and how to see it. ``unseen_params``: the model's
    trainable parameters with no node in the graph, for when the contexts are gone."""
    recomputes = [i for i in infos if i.cls == "RecomputeFunction"]
    hiding = [i for i in infos if i.hidden]
    how = (
        "to see them, run the forward once without recompute (e.g. recompute off in the "
        "model's config) and build the graph from that."
    )
    if hiding:
        count = sum(len(i.hidden) for i in hiding)
        return (
            f"Recompute hides the GradNodes of {len(hiding)} layer(s) and {count} parameter(s) "
            f"inside one node each (click one to list them); {how}"
        )
    if not recomputes:
        return None
    unseen = f" ({unseen_params} trainable parameter(s) have no node here)" if unseen_params else ""
    return (
        f"Recompute hides the GradNodes inside {len(recomputes)} RecomputeFunction node(s)"
        f"{unseen}; backward() has released which layer each one ran, so build the graph "
        f"before backward() or inside trace() to name them; {how}"
    )
