"""What looks wrong in a graph's gradients, in words: one rule per module, each a pure
function of the graph (its statistics and meta), thresholds in thresholds.py.

Problems first (severity "problem"), then information (severity "info": parameters frozen
with stop_gradient=True). Every line names the layer path, the parameter or GradNode, then the
call site. A graph with a NaN/Inf gets no exploding/vanishing findings: norms over the finite
elements of a broken backward say nothing about scale."""

from __future__ import annotations

from ..parts import GraphParts
from .empty_input import is_empty
from .exploding import exploding
from .few_values import explain_few_values
from .flow import Flow
from .nonfinite import nonfinite
from .problem import SEVERITIES, Problem
from .unreached import unreached
from .vanishing import vanishing
from .zeros import zeros

__all__ = [
    "SEVERITIES",
    "Problem",
    "find_problems",
    "has_statistics",
    "problems_text",
    "unchecked_edges",
    "unchecked_reasons",
]


def find_problems(graph: GraphParts) -> list[Problem]:
    flow = Flow.of(graph)
    found = nonfinite(flow)
    if not found:
        found += exploding(flow) + vanishing(flow)
    found = explain_few_values(found + zeros(flow), flow) + unreached(flow)
    return [p for p in found if p.severity == "problem"] + [
        p for p in found if p.severity != "problem"
    ]


NOT_CHECKED = (
    "No gradient statistics in this graph, so nothing was checked: build it from a forward "
    "and backward run inside `with trace(model, stats=True):` to have its gradients looked at."
)


def has_statistics(graph: GraphParts) -> bool:
    """Whether the problem rules have anything to read (trace(stats=True) was on)."""
    return any(e.stats is not None for e in graph.edges) or "problems" in graph.meta


def unchecked_edges(graph: GraphParts) -> int:
    """Edges that carried a gradient without statistics (an LSTM's fused weights, a complex
    or integer gradient, a to_static program's inside): nothing the rules could look at."""
    # A 0-element gradient (an MoE expert given no token) has nothing to check.
    return sum(1 for e in graph.edges if e.stats is None and e.grad is not None and not is_empty(e))


def unchecked_reasons(graph: GraphParts) -> dict[str, int]:
    """Of unchecked_edges, those whose edge says why it has none (``no_stats``: inside a
    to_static program, which carries no notice line), counted by reason."""
    why: dict[str, int] = {}
    for e in graph.edges:
        if e.stats is None and e.grad is not None and e.no_stats:
            why[e.no_stats] = why.get(e.no_stats, 0) + 1
    return why


def problems_text(problems: list[Problem], checked: bool = True, unchecked: int = 0,
                  why: dict[str, int] | None = None) -> str:  # fmt: skip
    """One line each, for a terminal; information listed apart, after the problems.
    ``checked``: the graph had statistics (has_statistics); if not, nothing found means
    nothing was looked at, and the text says so. ``unchecked``: of a graph that had, the
    edges without (unchecked_edges): "no problems" is then said of the others only; ``why``:
    the reasons some of them give (unchecked_reasons), the others' are the notices'."""
    bad = [p.line() for p in problems if p.severity == "problem"]
    info = [p.line() for p in problems if p.severity != "problem"]
    nothing = "No problems found in this graph's gradients." if checked else NOT_CHECKED
    if checked and unchecked:
        reasons = [f"{n} {reason}" for reason, n in (why or {}).items()]
        rest = unchecked - sum((why or {}).values())
        if rest > 0:
            reasons.append(f"{rest} for the reasons the graph's notices give")
        nothing = (
            f"No problems found in the gradients that have statistics; {unchecked} edge(s) "
            "carried a gradient without them, so those were not checked: "
            + "; ".join(reasons)
            + "."
        )
    head = "\n".join(bad) if bad else nothing
    if info:
        head += "\nFor information (not problems):\n" + "\n".join(f"  {i}" for i in info)
    return head
