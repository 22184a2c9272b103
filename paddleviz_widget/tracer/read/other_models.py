"""Names for the parameters of a second model in one graph: a GAN's generator and
discriminator, a teacher and a student, an encoder and a decoder kept apart. The first model
names its parameters as always ("0.weight"); a layer the calling code holds names the rest
after its variable ("D.0.weight"), any other live layer after its class
("Discriminator.0.weight"): unique names, so no two parameters read alike."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import Any

from ...graph.model import ParamInfo
from .calling_frames import in_calling_frames
from .params import accumulation_ptr
from .tensor_info import dtype_name


def other_models_params(
    unnamed: set[int], model: Any, taken: Iterable[str]
) -> tuple[dict[int, ParamInfo], set[int]]:
    """Accumulation ptr -> ParamInfo for ``unnamed`` leaves that are another layer's
    parameters (not ``model``'s), and which of them a variable of the calling code named.
    ``taken``: names already given in this graph."""
    import paddle

    if not unnamed:
        return {}, set()
    names = set(taken)
    named: dict[int, ParamInfo] = {}
    left = set(unnamed)
    frames = [(k, v) for k, v in in_calling_frames(paddle.nn.Layer) if not k.startswith("_")]
    _name_by_cover(frames, model, left, names, named)
    by_variable = set(named)
    # A leaf the caller holds as a tensor (an input image, for saliency) is no parameter:
    # the live-object search below (~50 ms with a big model in memory) is not for it.
    param_type = paddle.base.framework.EagerParamBase
    held = in_calling_frames(paddle.Tensor)
    left.difference_update(accumulation_ptr(t) for _, t in held if not isinstance(t, param_type))
    if left:  # held elsewhere (a trainer's attributes): every live model, by its class
        _name_by_cover(_live_models(paddle.nn.Layer), model, left, names, named)
    return named, by_variable


def _live_models(layer_type: type) -> list[tuple[str, Any]]:
    """(class name, layer) for every live layer that is no other layer's sublayer: its
    parameters cover its sublayers', so only these are asked (a 10k-layer model: one)."""
    layers: list[Any] = [o for o in gc.get_objects() if isinstance(o, layer_type)]
    inside = {id(sub) for layer in layers for sub in layer._sub_layers.values()}
    return [(type(o).__name__, o) for o in layers if id(o) not in inside]


def _name_by_cover(
    candidates: list[tuple[str, Any]], model: Any, left: set[int], names: set[str],
    named: dict[int, ParamInfo],
) -> None:  # fmt: skip
    """Greedy: the layer whose parameters cover most of ``left`` (the outermost on ties)
    names them, until none covers any."""
    covers: list[tuple[str, Any, dict[int, tuple[str, Any]]]] = []
    for prefix, layer in candidates:
        if layer is model:
            continue
        own: dict[int, tuple[str, Any]] = {}
        for name, p in layer.named_parameters():
            ptr = accumulation_ptr(p)
            if ptr in left:
                own.setdefault(ptr, (name, p))
        if own:
            covers.append((prefix, layer, own))
    while left and covers:
        prefix, layer, own = max(covers, key=lambda c: (len(c[2].keys() & left), len(c[2])))
        mine = {ptr: np for ptr, np in own.items() if ptr in left}
        if not mine:
            return
        prefix = _unique(prefix, names)
        for ptr, (name, p) in mine.items():
            full = f"{prefix}.{name}"
            names.add(full)
            named[ptr] = ParamInfo(
                name=full, shape=tuple(int(d) for d in p.shape), dtype=dtype_name(p.dtype)
            )
        left.difference_update(mine)


def _unique(prefix: str, names: set[str]) -> str:
    """``prefix``, or ``prefix_1``, ... if a name already starts with it."""

    def used(p: str) -> bool:
        return any(n.startswith(p + ".") for n in names)

    if not used(prefix):
        return prefix
    i = 1
    while used(f"{prefix}_{i}"):
        i += 1
    return f"{prefix}_{i}"
