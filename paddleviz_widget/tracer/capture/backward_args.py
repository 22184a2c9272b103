"""What trace() reads off a backward call's arguments, and of the model."""

from __future__ import annotations

from typing import Any

from ..read.grad_node import grad_node_of
from .anchors import is_tensor


def layer_count(model: Any) -> int:
    return sum(1 for _ in model.sublayers(include_self=True))


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def grad_targets(args: tuple[Any, ...], kwargs: dict[str, Any]) -> frozenset[int] | None:
    """The GradNodes of paddle.grad's ``inputs`` (a leaf's accumulation node, else grad_fn)."""
    inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
    no_grad_vars = args[7] if len(args) > 7 else kwargs.get("no_grad_vars")
    if inputs is None or no_grad_vars is not None:
        return None
    nodes = (grad_node_of(t) for t in as_list(inputs) if is_tensor(t))
    return frozenset(int(n.node_ptr()) for n in nodes if n is not None)
