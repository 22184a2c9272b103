"""Annotate a graph that was built outside ``trace()`` by replaying its backward once.

``paddle.grad(roots, leaves, retain_graph=True)`` under log capture: it computes gradients
without touching any ``.grad`` and keeps the graph, so the user's state is unchanged. It needs
the graph to be alive (backward not run yet, or run with retain_graph=True) and the leaf
tensors, which come from ``model``/``params`` or, failing those, from the parameters Python's
garbage collector knows about.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterable
from types import FrameType
from typing import Any

from .backward_capture import CapturedBackward, run_captured
from .params import accumulation_ptr


def _candidate_leaves(model: Any, params: Any) -> list[Any]:
    import paddle

    if model is not None:
        return list(model.parameters())
    if params is not None:
        values = params.values() if hasattr(params, "values") else (p for _, p in params)
        return [p for p in values if isinstance(p, paddle.Tensor)]
    # Parameters (EagerParamBase) are Python objects the collector tracks; plain tensors aren't.
    return [o for o in gc.get_objects() if isinstance(o, paddle.base.framework.EagerParamBase)]


def discover_model(accumulation_ptrs: set[int]) -> Any:
    """The live nn.Layer whose parameters name most of the graph's leaves (outermost on ties).

    Lets ``GraphWidget(y)`` name parameters "fc.0.weight" without ``model=``. The layers the
    calling code can see (its frames' locals and globals, e.g. a notebook's ``model``) are
    tried first; only if none of them names every leaf are all live objects searched, which
    costs ~60 ms with a big model in memory.
    """
    import paddle

    if not accumulation_ptrs:
        return None
    best, covered = _best_layer(_layers_in_calling_frames(paddle.nn.Layer), accumulation_ptrs)
    if covered == len(accumulation_ptrs):
        return best
    everywhere = (o for o in gc.get_objects() if isinstance(o, paddle.nn.Layer))
    return _best_layer(everywhere, accumulation_ptrs)[0]


def _best_layer(layers: Iterable[Any], accumulation_ptrs: set[int]) -> tuple[Any, int]:
    best, best_key = None, (0, 0)
    for layer in layers:
        names = list(layer.named_parameters())
        covered = sum(1 for _, p in names if accumulation_ptr(p) in accumulation_ptrs)
        key = (covered, len(names))
        if covered and key > best_key:
            best, best_key = layer, key
    return best, best_key[0]


def _layers_in_calling_frames(layer_type: type) -> list[Any]:
    found: dict[int, Any] = {}
    scanned: set[int] = set()  # a module's globals serve many frames
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        for namespace in (frame.f_locals, frame.f_globals):
            if id(namespace) in scanned:
                continue
            scanned.add(id(namespace))
            for value in list(namespace.values()):
                if isinstance(value, layer_type):
                    found.setdefault(id(value), value)
        frame = frame.f_back
    return list(found.values())


def find_leaves(accumulation_ptrs: set[int], model: Any = None, params: Any = None) -> list[Any]:
    leaves, seen = [], set()
    for tensor in _candidate_leaves(model, params):
        if tensor.stop_gradient:
            continue
        ptr = accumulation_ptr(tensor)
        if ptr in accumulation_ptrs and ptr not in seen:
            seen.add(ptr)
            leaves.append(tensor)
    return leaves


def replay_backward(roots: list[Any], leaves: list[Any], *, log: bool = True) -> CapturedBackward:
    """Run the instrumented side-effect-free backward; raises if the graph was already freed.

    ``log``: capture the VLOG (slot names); Paddle's dump (edge gradients) is taken either way.
    """
    import paddle.base.dygraph.base as dygraph_base

    grad = dygraph_base.grad  # the unpatched entry point, even inside an active trace()
    _, captured = run_captured(
        lambda extra: grad(roots, leaves, retain_graph=True, allow_unused=True, **extra),
        function=grad,
        quiet=True,
        log=log,
        call_sites=False,  # the stacks are keyed by the copies' pointers
    )
    return captured


def graph_was_freed(error: BaseException) -> bool:
    return "TensorWrapper" in str(error) or "retain_graph" in str(error)
