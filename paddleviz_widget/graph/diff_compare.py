"""What differs between a node (or edge) of graph a and its match in graph b, for
graph/diff.py. Pure. A value is compared only where both graphs know it: a gradient shape one
graph did not record is not a change, it is absent (and the diff's notice says why)."""

from __future__ import annotations

import math
from typing import Any

from .parts import Change, Edge, GradInfo, GradStats, Node, Slot


def _known(changes: list[Change], field: str, a: Any, b: Any, of: str | None) -> None:
    if a is not None and b is not None and a != b:
        changes.append(Change(field, a, b, of))


def _grad(changes: list[Change], a: GradInfo | None, b: GradInfo | None, of: str | None) -> None:
    if a is not None and b is not None:
        _known(changes, "dtype", a.dtype, b.dtype, of)
        _known(changes, "shape", a.shape, b.shape, of)


def _slots(changes: list[Change], a: tuple[Slot, ...], b: tuple[Slot, ...], side: str) -> None:
    if not a or not b:
        return  # one graph has no slot log for this node
    names_a, names_b = tuple(s.name for s in a), tuple(s.name for s in b)
    if names_a != names_b:
        changes.append(Change("slots", names_a, names_b, side))
        return
    for sa, sb in zip(a, b):
        _grad(changes, sa.grad, sb.grad, f"{side}.{sa.name}")


def node_changes(a: Node, b: Node, *, stats: bool) -> list[Change]:
    """Parameter, output tensor and slot dtypes and shapes; with ``stats`` (both graphs have
    gradient statistics) a parameter's gradient status too."""
    changes: list[Change] = []
    if a.param is not None and b.param is not None:
        _known(changes, "dtype", a.param.dtype, b.param.dtype, "param")
        _known(changes, "shape", a.param.shape, b.param.shape, "param")
    _grad(changes, a.tensor, b.tensor, "tensor")
    _slots(changes, a.inputs, b.inputs, "inputs")
    _slots(changes, a.outputs, b.outputs, "outputs")
    if stats and a.kind == "param" and b.kind == "param" and a.grad_status != b.grad_status:
        changes.append(Change("grad_status", a.grad_status, b.grad_status, "param"))
    return changes


def beyond(a: float, b: float, rtol: float) -> bool:
    """Whether a and b differ by more than ``rtol`` of the larger of them."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return a != b and not (math.isnan(a) and math.isnan(b))
    return abs(b - a) > rtol * max(abs(a), abs(b))


def _stats(changes: list[Change], a: GradStats, b: GradStats, rtol: float,
           scales: tuple[float, float]) -> None:  # fmt: skip
    # NaN/Inf counts first: a gradient gone NaN has a norm and max |g| of its finite values,
    # often 0, which read as a gradient that vanished when listed first.
    if a.nan != b.nan:
        changes.append(Change("nan", a.nan, b.nan))
    if a.inf != b.inf:
        changes.append(Change("inf", a.inf, b.inf))
    a_norm, a_max, b_norm, b_max = a.norm, a.max_abs, b.norm, b.max_abs
    if scales[0] != scales[1]:  # a GradScaler's scaled gradients: as the optimizer has them
        a_norm, a_max = a_norm / scales[0], a_max / scales[0]
        b_norm, b_max = b_norm / scales[1], b_max / scales[1]
    if a_norm != b_norm and beyond(a_norm, b_norm, rtol):
        changes.append(Change("norm", a_norm, b_norm))
    if a_max != b_max and beyond(a_max, b_max, rtol):
        changes.append(Change("max_abs", a_max, b_max))


def edge_changes(
    a: Edge, b: Edge, *, rtol: float, scales: tuple[float, float] = (1.0, 1.0), stats: bool = True
) -> list[Change]:
    """The gradient's dtype and shape, the sending slot, and, where both edges have gradient
    statistics, a norm or max |g| that moved by more than ``rtol`` (relative to the larger)
    or a NaN/Inf count that changed at all. ``scales``: each graph's loss scale (a GradScaler
    multiplied its gradients by it, meta.loss_scale); when they differ, norms and max |g| are
    compared divided by them. ``stats=False``: the statistics are not compared at all."""
    changes: list[Change] = []
    if a.grad != b.grad:  # (the common case, equal, costs one comparison)
        _grad(changes, a.grad, b.grad, None)
    if a.slot != b.slot:
        _known(changes, "slot", a.slot, b.slot, None)
    if stats and a.stats is not None and b.stats is not None:
        _stats(changes, a.stats, b.stats, rtol, scales)
    return changes


def input_size_notice(marks: list[Any], labels: list[str]) -> str | None:
    """When every shape that changed (gradients, tensors, slots) differs only in sizes that
    scale by one factor, and no parameter changed shape: the two graphs' inputs differ in
    size (the last batch of an epoch, another sequence length), which marks every
    activation's gradient changed. Said once, so that it is not read as a changed model."""
    pairs: set[tuple[int, int]] = set()
    for mark in marks:
        for c in mark.changes:
            if c.field != "shape":
                continue
            a, b = c.a, c.b
            if c.of == "param" or a is None or b is None or len(a) != len(b):
                return None
            pairs.update((x, y) for x, y in zip(a, b) if x != y)
    if not pairs or any(x <= 0 or y <= 0 for x, y in pairs):
        return None
    x0, y0 = min(pairs)
    if any(x * y0 != y * x0 for x, y in pairs):  # not one factor: the model changed too
        return None
    also = " (and multiples of them)" if len(pairs) > 1 else ""
    return (
        f"Every shape that changed differs only in sizes {x0} in {labels[0]!r} -> {y0} in "
        f"{labels[1]!r}{also}, and no parameter changed shape: what inputs of another size (a "
        "batch size, a sequence length) make with the same model."
    )
