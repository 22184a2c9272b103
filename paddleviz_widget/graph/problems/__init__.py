"""What looks wrong in a graph's gradients, in words: one rule per module, each a pure
function of the graph (its statistics and meta), thresholds in thresholds.py.

Problems first (severity "problem"), then information (severity "info": parameters frozen
with stop_gradient=True). Every line names the layer path, the parameter or GradNode, then the
call site. A graph with a NaN/Inf gets no exploding/vanishing findings: norms over the finite
elements of a broken backward say nothing about scale."""

from __future__ import annotations

from ..parts import GraphParts
from .exploding import exploding
from .flow import Flow
from .nonfinite import nonfinite
from .problem import SEVERITIES, Problem
from .unreached import unreached
from .vanishing import vanishing
from .zeros import zeros

__all__ = ["SEVERITIES", "Problem", "find_problems", "problems_text"]


def find_problems(graph: GraphParts) -> list[Problem]:
    flow = Flow.of(graph)
    found = nonfinite(flow)
    if not found:
        found += exploding(flow) + vanishing(flow)
    found += zeros(flow) + unreached(flow)
    return [p for p in found if p.severity == "problem"] + [
        p for p in found if p.severity != "problem"
    ]


def problems_text(problems: list[Problem]) -> str:
    """One line each, for a terminal; information listed apart, after the problems."""
    bad = [p.line() for p in problems if p.severity == "problem"]
    info = [p.line() for p in problems if p.severity != "problem"]
    head = "\n".join(bad) if bad else "No problems found in this graph's gradients."
    if info:
        head += "\nFor information (not problems):\n" + "\n".join(f"  {i}" for i in info)
    return head
