"""Turn what the user passed (`y`) into root tensors, or say clearly what to pass instead."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...graph.model import Graph
from .grad_node import grad_node_of

USAGE = (
    "pass the tensor your model returned (or a list/tuple/dict of them), "
    "e.g. GraphWidget(model(x)) or build_graph([loss_a, loss_b])"
)


@dataclass(frozen=True)
class RootTensor:
    """A tensor the user asked to see, with the label it should carry in the graph."""

    label: str
    tensor: Any
    grad_fn: Any = None


def _is_tensor(obj: Any) -> bool:
    import paddle

    return isinstance(obj, paddle.Tensor)


def _describe(obj: Any) -> str:
    text = type(obj).__name__
    if isinstance(obj, (int, float, str, bool)):
        text += f" {obj!r}"
    return text


def _check_has_graph(label: str, tensor: Any) -> Any:
    """The tensor's grad_fn, or a ValueError that says how to get one."""
    node = grad_node_of(tensor)
    if node is not None:
        return node
    if tensor.stop_gradient:
        raise ValueError(
            f"{label} has no backward graph: it has stop_gradient=True and no grad_fn. "
            "Build it from parameters or inputs with stop_gradient=False (nn.Layer parameters "
            "are by default), outside paddle.no_grad(), and without .detach()."
        )
    raise ValueError(  # pragma: no cover - Paddle gives every grad-requiring tensor a grad_fn
        f"{label} requires grad but has no grad_fn; it cannot be traced."
    )


def _left_out(value: Any) -> bool:
    """An entry of a model's output that cannot be a root and is no mistake to leave out: None,
    or an object such as paddleformers' DynamicCache (its output tuple and ModelOutput carry
    one: ``(logits, past_key_values)``). A number or a string still gets its error (a loss
    turned into a float with ``.item()`` is not what the graph can show)."""
    return not _is_tensor(value) and not isinstance(value, (int, float, complex, str, bytes))


def refuse_static_mode() -> None:
    """Under paddle.enable_static() every Paddle op makes a static-graph Value, not a Tensor:
    reading a graph (its probes, replay, statistics run ops) failed deep inside, with
    "'pir.Value' object has no attribute 'grad_fn'". The mode is the user's: said, not
    switched."""
    import paddle

    if not paddle.in_dynamic_mode():
        raise RuntimeError(
            "paddle.enable_static() is in effect: the backward graph is read in dynamic mode "
            "only. Call paddle.disable_static() first (the tensor must come from a forward run "
            "in dynamic mode)."
        )


def _graph_given(y: Any) -> str | None:
    """What to call instead when ``y`` is a graph already: a graph document (what build_graph
    returns, a dict with ``schema_version``), a Graph, or the path of a saved ``.json`` file.
    Without this, a document got "value for key 'schema_version' is a str", which names no
    way forward."""
    if isinstance(y, Mapping) and "schema_version" in y:
        what = "a graph document (what build_graph returns)"
    elif isinstance(y, Graph):
        what = "a Graph"
    elif isinstance(y, (str, os.PathLike)) and str(y).lower().endswith(".json"):
        what = f"the path {str(y)!r}"
    else:
        return None
    return (
        f"got {what}, not tensors: it is a graph already. Show it with "
        "GraphWidget.from_graph(...) (a dict, a Graph or a .json path); to build a graph, "
        "pass the tensor your model returned, e.g. GraphWidget(model(x))"
    )


def split_roots(y: Any) -> tuple[list[RootTensor], list[str]]:
    """The root tensors of ``y``, and the entries of a list/tuple/dict left out as not tensors
    (described for a notice), when at least one entry is a tensor."""
    given = _graph_given(y)
    if given is not None:
        raise TypeError(given)
    refuse_static_mode()
    entries = list(y.items()) if isinstance(y, Mapping) else None
    if entries is None and isinstance(y, (list, tuple)):
        entries = list(enumerate(y))
    if not entries or not any(_is_tensor(v) for _, v in entries):
        return normalize_roots(y), []
    keep = [(k, v) for k, v in entries if not _left_out(v)]
    left = [
        f"{'key ' + repr(k) if isinstance(y, Mapping) else f'item {k}'} (a {_describe(v)})"
        for k, v in entries
        if _left_out(v)
    ]
    if isinstance(y, Mapping):
        return normalize_roots(dict(keep)), left
    # Items keep their index in their labels ("output_0"), as without the left-out ones.
    named = [RootTensor(getattr(v, "name", None) or f"output_{i}", v) for i, v in keep]
    for i, v in keep:
        if not _is_tensor(v):
            raise TypeError(f"item {i} is a {_describe(v)}, not a paddle.Tensor; {USAGE}")
    return _with_graphs(named), left


def _with_graphs(roots: list[RootTensor]) -> list[RootTensor]:
    return [
        RootTensor(r.label, r.tensor, _check_has_graph(f"tensor {r.label!r}", r.tensor))
        for r in roots
    ]


def normalize_roots(y: Any) -> list[RootTensor]:
    """Accept a Tensor, a list/tuple of Tensors, or a dict name -> Tensor."""
    if _is_tensor(y):
        roots = [RootTensor(getattr(y, "name", None) or "output", y)]
    elif isinstance(y, Mapping):
        if not y:
            raise ValueError(f"got an empty dict; {USAGE}")
        roots = []
        for key, value in y.items():
            if not _is_tensor(value):
                raise TypeError(
                    f"value for key {key!r} is a {_describe(value)}, not a paddle.Tensor; {USAGE}"
                )
            roots.append(RootTensor(str(key), value))
    elif isinstance(y, (list, tuple)):
        if not y:
            raise ValueError(f"got an empty {type(y).__name__}: pass at least one tensor; {USAGE}")
        roots = []
        for i, value in enumerate(y):
            if not _is_tensor(value):
                raise TypeError(f"item {i} is a {_describe(value)}, not a paddle.Tensor; {USAGE}")
            roots.append(RootTensor(getattr(value, "name", None) or f"output_{i}", value))
    else:
        raise TypeError(f"expected a paddle.Tensor, got {_describe(y)}; {USAGE}")
    return _with_graphs(roots)
