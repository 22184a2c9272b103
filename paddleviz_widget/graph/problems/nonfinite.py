"""Where the first NaN/Inf was made: a GradNode of the backward (meta.first_nonfinite), or,
when the loss was already NaN/Inf, the first layer whose forward output held one
(meta.forward_nonfinite, from trace(model, stats=True)'s per-layer check)."""

from __future__ import annotations

from typing import Any

from .flow import Flow
from .problem import Problem

# GradNodes of ops that can make a NaN/Inf from finite inputs (log of <= 0, sqrt of < 0, a
# division by 0, exp overflow, ...): named as the suspects inside the culprit layer.
MAKERS = ("Log", "Sqrt", "Rsqrt", "Divide", "Pow", "ElementwisePow", "Exp", "Reciprocal",
          "Acos", "Asin", "Atanh", "Acosh", "Lgamma", "Digamma", "Tan")  # fmt: skip
FLAGS_HINT = "paddle.set_flags({'FLAGS_check_nan_inf': 1}) makes Paddle name the forward op"


def _forward(flow: Flow, first: str, entry: dict[str, Any]) -> Problem:
    layer = str(entry.get("layer"))
    site = entry.get("call_site")
    at = f"{site['file']}:{site['line']}" if isinstance(site, dict) else None
    ops = [o for o in entry.get("ops") or () if o in flow.nodes]
    if not entry.get("inputs_finite", True):
        reason = (
            "the model's input already held a NaN/Inf: it came with the data, before any "
            "layer of the model ran"
        )
        return Problem("nonfinite", str(entry.get("layer_type")), reason, None, layer, site=at)
    kind = str(entry.get("layer_type"))
    before = entry.get("before")
    first_held = (
        f"the first NaN/Inf of the forward was made by this {kind}'s own code, before it "
        f"called {before}"
        if before else f"this {kind}'s forward output was the first to hold a NaN/Inf"
    )  # fmt: skip
    suspects = [o for o in ops if flow.nodes[o].name.startswith(MAKERS)]
    if len(ops) == 1 or len(suspects) == 1:
        op = flow.nodes[ops[0] if len(ops) == 1 else suspects[0]]
        how = "its only op" if len(ops) == 1 else (
            f"the only one of its {len(ops)} ops that can make a NaN/Inf from finite values"
        )  # fmt: skip
        reason = f"{first_held}: by {op.name}, {how}"
        return Problem("nonfinite", op.name, reason, op.id, layer, site=flow.site_of(op.id) or at)
    named = ", ".join(flow.nodes[o].name for o in suspects)
    which = (
        f"one of its {len(ops)} ops made it, which a per-layer check cannot tell"
        + (f" (those that can make one from finite values: {named})" if named else "")
        if ops else "which op is not known"
    )  # fmt: skip
    reason = f"{first_held}: {which}; {FLAGS_HINT}"
    return Problem("nonfinite", kind, reason, None, layer, site=at)


def nonfinite(flow: Flow) -> list[Problem]:
    meta = flow.graph.meta
    first = meta.get("first_nonfinite")
    if not isinstance(first, str):
        return []
    entry = meta.get("forward_nonfinite")
    if meta.get("nonfinite_in_forward") and isinstance(entry, dict):
        return [_forward(flow, first, entry)]
    node = flow.nodes.get(first)
    name = node.name if node is not None else first
    site = flow.site_of(first)
    if meta.get("nonfinite_in_forward"):
        # No gradient was finite: the op that made the NaN/Inf ran in the forward, at or
        # before this one, and only the forward's values could name it.
        reason = (
            "the loss was already NaN/Inf when the backward started: the forward made it, at "
            f"or before this op; trace(model, stats=True) names the layer, {FLAGS_HINT}"
        )
    else:
        reason = "the first NaN/Inf gradient was made here from finite ones"
    return [Problem("nonfinite", name, reason, first, flow.layer_of(first), site=site)]
