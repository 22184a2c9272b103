"""Vanishing gradients: layers whose incoming gradient is below VANISHING_FRACTION of what
enters the layer nearest the loss, and the ops where it is lost (the GradNodes that shrink it
most, each below VANISHING_OP_SHRINK: saturated sigmoid/tanh). All-zero gradients are the
zeros rule's, not this one's."""

from __future__ import annotations

from .flow import Flow, node_factor, norm_of
from .problem import Problem
from .thresholds import VANISHING_FRACTION, VANISHING_OP_SHRINK, VANISHING_OPS_NAMED


def _param_layers(flow: Flow) -> list[str]:
    """Groups that own a parameter directly, nearest the loss first (by their earliest node:
    nodes come in breadth-first order from the roots)."""
    first: dict[str, int] = {}
    owners = set()
    for k, n in enumerate(flow.graph.nodes):
        chain = flow.chain[n.id]
        if chain:
            first.setdefault(chain[0], k)
            if n.kind == "param" and n.param is not None:
                owners.add(chain[0])
    return sorted(owners, key=first.__getitem__)


def vanishing(flow: Flow) -> list[Problem]:
    layers = _param_layers(flow)
    incoming = {g: norm_of(flow.group_in.get(g, [])) for g in layers}
    known = [g for g in layers if incoming[g]]
    if len(known) < 2:
        return []
    last = known[0]
    scale = incoming[last]
    assert scale is not None
    low = {g: (incoming[g] or 0.0) / scale for g in known[1:]}
    low = {g: r for g, r in low.items() if 0 < r < VANISHING_FRACTION}
    if not low:
        return []
    shrinks = []
    for n in flow.graph.nodes:
        if n.kind == "op" and flow.chain[n.id]:
            f = node_factor(flow, n.id)
            if f is not None and 0 < f < VANISHING_OP_SHRINK:
                shrinks.append((f, n.id))
    shrinks.sort()
    named = shrinks[:VANISHING_OPS_NAMED]
    names = tuple(flow.group_name[g] for g in low)
    worst = min(low.values())
    lost = (
        ", ".join(f"{flow.nodes[i].name} in {flow.layer_of(i)} (x{f:.2g})" for f, i in named)
        or "no single op: it shrinks a little in each layer"
    )
    reason = (
        f"the gradient vanishes: {len(names)} layer(s) get less than "
        f"{VANISHING_FRACTION:g} of what enters {flow.group_name[last]} (the layer nearest the "
        f"loss), down to {worst:.2g}: {', '.join(names)}; lost at {lost} "
        "(saturated activations? inputs too large, or use ReLU/normalisation)"
    )
    op = named[0][1] if named else None
    return [Problem("vanishing", flow.nodes[op].name if op else names[-1], reason, op,
                    flow.layer_of(op) if op else names[-1], factor=worst, affected=names,
                    site=flow.site_of(op) if op else None)]  # fmt: skip
