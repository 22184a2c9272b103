"""Turn what the user passed (`y`) into root tensors, or say clearly what to pass instead."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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
    return [
        RootTensor(r.label, r.tensor, _check_has_graph(f"tensor {r.label!r}", r.tensor))
        for r in roots
    ]
