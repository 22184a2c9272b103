"""A parameter whose all-zero gradient comes from an empty input: its layer ran on 0 rows (an
MoE expert no token was routed to this step, still called on the empty selection), so every
gradient its ops received had 0 elements and its own is zeros by definition. Nothing is dead
or masked: not a zero problem, only worth knowing. Such 0-element gradients carry no
statistics, and there is nothing in them to check."""

from __future__ import annotations

from ..parts import Edge
from .flow import Flow

EMPTY_REASON = (
    "its gradient is all zeros because its layer ran on an empty input this step: every "
    "gradient reaching it had 0 elements (e.g. an MoE expert no token was routed to). Nothing "
    "is dead or masked; an expert that keeps getting no tokens points at the router's balance"
)


def is_empty(edge: Edge) -> bool:
    """The edge carried a gradient with 0 elements (a dimension of size 0)."""
    shape = edge.grad.shape if edge.grad is not None else None
    return bool(shape) and 0 in shape  # type: ignore[operator]


def _fed_empty(flow: Flow, node: str, known: dict[str, bool]) -> bool:
    """Every gradient the node received had 0 elements, or was all zeros sent by a node so
    fed (a weight's own ops between it and the matmul that got the empty rows: a weight
    norm's divide and multiply, a cast). ``known``: nodes already decided."""
    if node not in known:
        known[node] = False  # while deciding (the backward graph has no cycle)
        got = flow.node_in.get(node)
        known[node] = bool(got) and all(
            is_empty(e)
            or (
                e.stats is not None
                and e.stats.zero_fraction == 1.0
                and _fed_empty(flow, e.source, known)
            )
            for e in got or ()
        )
    return known[node]


def empty_input_params(flow: Flow, zero_params: set[str]) -> set[str]:
    """Of the zero parameters, those every sender of which was fed only 0-element gradients
    (a Linear's matmul and its bias add, given the expert's empty rows)."""
    found: set[str] = set()
    known: dict[str, bool] = {}
    for p in zero_params:
        senders = {e.source for e in flow.node_in.get(p, [])}
        if senders and all(_fed_empty(flow, s, known) for s in senders):
            found.add(p)
    return found
