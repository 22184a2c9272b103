"""What looks wrong in a graph's gradients, in words: the GradNode where the first NaN/Inf was
born, parameters whose gradient was all zeros or never came, and parameters no gradient of
this graph reaches. Pure: reads a Graph (schema 2.1 fields and meta) and nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .parts import GraphParts

REASONS = {
    "zero": "its gradient is all zeros: the layer is saturated (e.g. dead ReLUs), its output "
    "is multiplied by zero, or the loss does not depend on it",
    "none": "no gradient reached it in this backward",
}


@dataclass(frozen=True)
class Problem:
    kind: str  # "nonfinite", "zero", "none", "unreached"
    name: str  # a parameter name, or the GradNode's name
    reason: str
    node: str | None = None  # node id in the graph, when it has one

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "node": self.node, "reason": self.reason}


def find_problems(graph: GraphParts) -> list[Problem]:
    found = []
    first = graph.meta.get("first_nonfinite")
    if isinstance(first, str):
        node = next((n for n in graph.nodes if n.id == first), None)
        site = node.call_site if node is not None else None
        at = f" (forward op at {site.file}:{site.line})" if site is not None else ""
        if graph.meta.get("nonfinite_in_forward"):
            # No gradient was finite: the op that made the NaN/Inf ran in the forward, at or
            # before this one, and only the forward's values could name it.
            reason = (
                f"the loss was already NaN/Inf when the backward started{at}: the forward made "
                "it, at or before this op; paddle.set_flags({'FLAGS_check_nan_inf': 1}) makes "
                "Paddle name the forward op that did"
            )
        else:
            reason = f"the first NaN/Inf gradient was made here from finite ones{at}"
        found.append(Problem("nonfinite", node.name if node is not None else first, reason, first))
    for n in graph.nodes:
        if n.grad_status is not None:
            name = n.param.name if n.param is not None else n.name
            found.append(Problem(n.grad_status, name, REASONS[n.grad_status], n.id))
    for entry in graph.meta.get("unreached_params") or []:
        found.append(Problem("unreached", str(entry.get("name")), str(entry.get("reason"))))
    return found


def problems_text(problems: list[Problem]) -> str:
    """One line each, for a terminal."""
    if not problems:
        return "No problems found in this graph's gradients."
    return "\n".join(f"{p.kind:<10} {p.name}: {p.reason}" for p in problems)
