"""Name parameters' accumulation nodes: GradNode ptr -> ParamInfo("fc.0.weight", shape, dtype)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from ...graph.model import ParamInfo
from .grad_node import grad_node_of
from .tensor_info import dtype_name
from .walk import ACCUMULATION_NODE

PARAMS_USAGE = (
    "pass params as a mapping name -> paddle.Tensor (e.g. params=dict(model.named_parameters())) "
    "or a list of (name, Tensor) pairs, or pass model=<your nn.Layer>"
)


def _is_tensor(obj: Any) -> bool:
    import paddle

    return isinstance(obj, paddle.Tensor)


def _pairs_from_params(params: Any) -> list[tuple[str, Any]]:
    if _is_tensor(params):
        raise TypeError(
            "params got a single paddle.Tensor, which has no name; pass params={'x': x} instead"
        )
    if isinstance(params, Mapping):
        items: Iterable[Any] = params.items()
    elif isinstance(params, Iterable) and not isinstance(params, (str, bytes)):
        items = params
    else:
        raise TypeError(f"params got a {type(params).__name__}; {PARAMS_USAGE}")
    pairs = []
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError(
                f"params item {i} is a {type(item).__name__}, not a (name, Tensor) pair; "
                f"{PARAMS_USAGE}"
            )
        name, tensor = item
        if not isinstance(name, str):
            raise TypeError(f"params name {name!r} is a {type(name).__name__}, not a str")
        if not _is_tensor(tensor):
            raise TypeError(
                f"params[{name!r}] is a {type(tensor).__name__}, not a paddle.Tensor; "
                f"{PARAMS_USAGE}"
            )
        pairs.append((name, tensor))
    return pairs


def _pairs_from_model(model: Any) -> list[tuple[str, Any]]:
    import paddle

    if not isinstance(model, paddle.nn.Layer):
        raise TypeError(
            f"model must be a paddle.nn.Layer, got a {type(model).__name__}; pass the model "
            "object itself (model=net), or name tensors with params={'name': tensor}"
        )
    # named_parameters() yields a tied parameter once, under its first owner's name.
    return list(model.named_parameters())


def accumulation_ptr(tensor: Any) -> int | None:
    """node_ptr() of a leaf tensor's GradNodeAccumulation; None if gradients don't reach it.

    None too for a non-leaf tensor: its grad_fn is the op that made it, not an accumulation.
    """
    if tensor.stop_gradient:
        return None
    node = grad_node_of(tensor)
    if node is None or node.name() != ACCUMULATION_NODE:
        return None
    return int(node.node_ptr())


def param_infos_by_ptr(
    model: Any = None, params: Any = None, ptrs: dict[int, int | None] | None = None,
    read: list[list[tuple[str, Any]]] | None = None,
) -> dict[int, ParamInfo]:  # fmt: skip
    """Accumulation-node ptr -> ParamInfo for a model's parameters and/or named tensors.

    ``model``: an nn.Layer, named as in ``model.named_parameters()`` ("fc.0.weight").
    ``params``: torchviz-style mapping name -> Tensor, or (name, Tensor) pairs. Names given in
    ``params`` win over the model's. The first name seen for a tensor wins otherwise.
    Tensors with stop_gradient=True (no accumulation node) and non-leaf tensors are skipped.
    ``ptrs``: filled with id(tensor) -> its accumulation_ptr, for unreached_params to reuse;
    ``read``: given the model's ``named_parameters()`` list, for the same (one pass over a
    10k-GradNode model's layer tree: ~6 ms); if it holds one already, that list is the
    model's (read by the caller just now) and is not read again.
    """
    if model is None and params is None:
        raise TypeError("param_infos_by_ptr needs model=<nn.Layer> or params=<name -> Tensor>")
    pairs: list[tuple[str, Any]] = []
    if params is not None:
        pairs += _pairs_from_params(params)
    if model is not None:
        if read:
            from_model = read[0]
        else:
            from_model = _pairs_from_model(model)
            if read is not None:
                read.append(from_model)
        pairs += from_model
    infos: dict[int, ParamInfo] = {}
    dtypes: dict[Any, str] = {}  # a model has few dtypes and 10k+ parameters
    kept = {} if ptrs is None else ptrs
    for name, tensor in pairs:
        # accumulation_ptr(tensor), written out (4k+ parameters a 10k-GradNode capture)
        node = None if tensor.stop_gradient else grad_node_of(tensor)
        ptr = None if node is None or node.name() != ACCUMULATION_NODE else int(node.node_ptr())
        kept[id(tensor)] = ptr
        if ptr is None or ptr in infos:
            continue
        dtype = tensor.dtype
        text = dtypes.get(dtype)
        if text is None:
            text = dtypes[dtype] = dtype_name(dtype)
        infos[ptr] = ParamInfo(name=name, shape=tuple(map(int, tensor.shape)), dtype=text)
    return infos


# Parameters a layer keeps with stop_gradient=True by design: Paddle's EagerParamBase has no
# flag telling them from a parameter the user froze (``trainable`` is ``not stop_gradient``),
# so they are known by their layer (a word of its class or a base class's name) and name.
# BatchNorm's running statistics; nn.SpectralNorm's power-iteration vectors.
BY_DESIGN = {
    "BatchNorm": ("_mean", "_variance"),
    "InstanceNorm": ("_mean", "_variance"),
    "SpectralNorm": ("weight_u", "weight_v"),
}


@lru_cache(maxsize=1024)
def _kept_by_design(layer_type: Any) -> frozenset[str]:
    kinds = [c.__name__ for c in layer_type.__mro__]
    return frozenset(
        name for word, names in BY_DESIGN.items() if any(word in k for k in kinds) for name in names
    )


def running_stat_ids(model: Any) -> set[int]:
    """ids of the parameters a layer keeps without gradient by design (BY_DESIGN)."""
    found = set()
    for layer in model.sublayers(include_self=True):
        names = _kept_by_design(layer.__class__)  # by type: ~10k layers of a few types
        if names:
            for name, p in layer.named_parameters(include_sublayers=False):
                if name in names and p.stop_gradient:
                    found.add(id(p))
    return found


FROZEN_REASON = "stop_gradient=True: frozen, no gradient is computed (on purpose?)"


def unreached_params(
    model: Any, accumulation_ptrs: set[int], ptrs: dict[int, int | None] | None = None,
    named: list[tuple[str, Any]] | None = None,
) -> list[tuple[str, str, list[int] | None]]:  # fmt: skip
    """(name, reason, shape) for each of ``model``'s parameters no gradient of this graph
    reaches; a frozen one's reason is FROZEN_REASON; its shape lets the per-layer counts
    include it (None where it cannot be read). Running statistics are left out: no gradient
    is meant to reach them. ``ptrs``: accumulation_ptr by id(parameter), as
    param_infos_by_ptr read them for this graph (asked again for a parameter not in it);
    ``named``: the model's ``named_parameters()``, if read already (param_infos_by_ptr's
    ``read``)."""
    out = []
    # Running statistics are frozen parameters: the layer tree is walked for them (~5 ms on a
    # 10k-GradNode Llama) only when the model has a frozen parameter at all
    running: set[int] | None = None
    known = {} if ptrs is None else ptrs
    for name, p in model.named_parameters() if named is None else named:
        if p.stop_gradient:
            if running is None:
                running = running_stat_ids(model)
            if id(p) in running:
                continue
            out.append((name, FROZEN_REASON, _shape(p)))
        elif (known[id(p)] if id(p) in known else accumulation_ptr(p)) not in accumulation_ptrs:
            out.append(
                (
                    name,
                    "not in this backward graph: its layer was not used, or its output was "
                    "detached before the loss",
                    _shape(p),
                )  # fmt: skip
            )
    return out


def _shape(p: Any) -> list[int] | None:
    try:
        shape = [int(d) for d in p.shape]
    except (TypeError, ValueError, AttributeError):
        return None
    return shape if all(d >= 0 for d in shape) else None  # (-1: not known yet)


def layer_param_counts(model: Any) -> dict[str, tuple[int, int]]:
    """Layer group name -> (parameter elements, trainable elements), the layer's sublayers
    included; named as trace() names groups (the model itself by its class)."""
    counts = {}
    for path, layer in model.named_sublayers(include_self=True):
        sizes = [(int(math.prod(p.shape)), not p.stop_gradient) for p in layer.parameters()]
        name = path or type(model).__name__
        counts[name] = (sum(s for s, _ in sizes), sum(s for s, t in sizes if t))
    return counts
