"""Annotate a graph that was built outside ``trace()`` by replaying its backward once.

``paddle.grad(roots, leaves, retain_graph=True)`` under log capture: it computes gradients
without touching any ``.grad`` and keeps the graph, so the user's state is unchanged. It needs
the graph to be alive (backward not run yet, or run with retain_graph=True) and the leaf
tensors, which come from ``model``/``params`` or, failing those, from the parameters Python's
garbage collector knows about, plus leaf tensors in the calling code's variables. Graphs it
must not replay (their backward runs user code) are refused by ``replay_safety``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ...graph.model import ParamInfo
from ..read.calling_frames import in_calling_frames, layers_in_calling_frames
from ..read.params import accumulation_ptr
from ..read.tensor_info import dtype_name
from .backward_capture import CapturedBackward, run_captured


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
    best, covered = _best_layer(layers_in_calling_frames(paddle.nn.Layer), accumulation_ptrs)
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


@dataclass(frozen=True)
class Leaves:
    """The tensors a replay differentiates for, and what is known of the others."""

    tensors: list[Any]
    ptrs: dict[int, tuple[int, ...]]  # accumulation ptr -> the shape its gradient must have
    named: dict[int, ParamInfo]  # leaves that are not parameters, named by the user's variable


def find_leaves(accumulation_ptrs: set[int], model: Any = None, params: Any = None) -> Leaves:
    """Leaf tensors of the graph the replay can name: the model's parameters, the tensors in
    ``params``, parameters the collector knows (if neither is given), and leaf tensors in the
    calling code's variables (an input image with stop_gradient=False, for saliency)."""
    import paddle

    candidates: list[tuple[str | None, Any]] = []
    if model is not None:
        candidates += [(None, p) for p in model.parameters()]
    if params is not None:
        pairs = params.items() if hasattr(params, "items") else params
        candidates += [(None, t) for _, t in pairs if isinstance(t, paddle.Tensor)]
    if model is None and params is None:  # parameters are objects the collector tracks
        param_type = paddle.base.framework.EagerParamBase
        candidates += [(None, o) for o in gc.get_objects() if isinstance(o, param_type)]
    candidates += [(k, t) for k, t in in_calling_frames(paddle.Tensor) if not k.startswith("_")]
    leaves = Leaves([], {}, {})
    for name, tensor in candidates:
        ptr = accumulation_ptr(tensor)
        if ptr is None or ptr not in accumulation_ptrs or ptr in leaves.ptrs:
            continue
        shape = tuple(int(d) for d in tensor.shape)
        leaves.tensors.append(tensor)
        leaves.ptrs[ptr] = shape
        if name is not None and not isinstance(tensor, paddle.base.framework.EagerParamBase):
            leaves.named[ptr] = ParamInfo(name=name, shape=shape, dtype=dtype_name(tensor.dtype))
    return leaves


def replay_backward(roots: list[Any], leaves: list[Any], *, log: bool = True) -> CapturedBackward:
    """Run the instrumented side-effect-free backward; raises if the graph was already freed.

    ``log``: capture the VLOG (slot names); Paddle's dump (edge gradients) is taken either way.
    """
    import paddle.base.dygraph.base as dygraph_base

    grad = dygraph_base.grad  # the unpatched entry point, even inside an active trace()
    with _nan_check_off():
        _, captured = run_captured(
            lambda extra: grad(roots, leaves, retain_graph=True, allow_unused=True, **extra),
            function=grad,
            quiet=True,
            log=log,
            call_sites=False,  # the stacks are keyed by the copies' pointers
        )
    return captured


@contextlib.contextmanager
def _nan_check_off() -> Iterator[None]:
    """The user's FLAGS_check_nan_inf (set to find where a NaN starts) off for the replay, a
    backward they did not run: with it on, a graph whose gradients hold an Inf failed the
    replay, and Paddle printed its "[PRECISION] [ERROR]" line into the user's stdout and a
    Python stack per op into their stderr. Their own backward is still checked."""
    import paddle

    try:
        on = paddle.get_flags(["FLAGS_check_nan_inf"])["FLAGS_check_nan_inf"]
    except (ValueError, KeyError):  # a Paddle without the flag
        on = False
    if on:
        paddle.set_flags({"FLAGS_check_nan_inf": False})
    try:
        yield
    finally:
        if on:
            paddle.set_flags({"FLAGS_check_nan_inf": on})


def graph_was_freed(error: BaseException) -> bool:
    return "TensorWrapper" in str(error) or "retain_graph" in str(error)
