"""merge/stats.py's param_statuses against its rule written out plainly, on random graphs.

param_statuses picks the leaves that may get a status ("zero": every gradient that reached it
was all zeros; "none": its senders ran and sent it nothing) in C, one pass per column, and runs
the rule for those only; this checks that no leaf the rule gives a status is missed, on graphs
with leaves of several senders (tied weights), senders that did not run, statistics missing,
gradients seen but not reduced (complex, past float64's range)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paddleviz_widget.graph.parts import GradInfo, GradStats
from paddleviz_widget.tracer.capture.stats_rows import BackwardStats
from paddleviz_widget.tracer.merge.stats import param_statuses
from paddleviz_widget.tracer.read.walk import (
    ACCUMULATION_NODE,
    WalkedEdge,
    WalkedNode,
    WalkResult,
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GRAD = GradInfo("float32", (2,), "cpu")


def _expected(walk: WalkResult, stats: BackwardStats) -> dict[int, str]:
    """The rule, one leaf at a time, in the order leaves are first reached by an edge."""
    incoming: dict[int, list[tuple[int, int]]] = {}
    for e in walk.edges:
        target = walk.nodes[e.target]
        if target.name == ACCUMULATION_NODE:
            incoming.setdefault(target.ptr, []).append((walk.nodes[e.source].ptr, e.slot))
    out = {}
    for ptr, keys in incoming.items():
        if not all(src in stats.ran for src, _ in keys):
            continue
        measured = [stats.edges[k] for k in keys if k in stats.edges]
        seen = any(k in stats.grads or k in stats.past_range for k in keys)
        if not measured and not seen:
            out[ptr] = "none"
        elif len(measured) == len(keys) and all(s.zero_fraction == 1.0 for s in measured):
            out[ptr] = "zero"
    return out


@st.composite
def _graphs(draw: st.DrawFn) -> tuple[WalkResult, BackwardStats]:
    ops = draw(st.integers(1, 5))
    leaves = draw(st.integers(1, 5))
    names = ["MatmulGradNode"] * ops + [ACCUMULATION_NODE] * leaves
    nodes = tuple(WalkedNode(i, n, 1000 + i, i == 0, 0) for i, n in enumerate(names))
    edges = []
    for source in range(ops):
        targets = draw(st.lists(st.integers(1, ops + leaves - 1), max_size=4))
        edges += [WalkedEdge(source, t, slot) for slot, t in enumerate(targets) if t != source]
    walk = WalkResult(nodes, tuple(edges), (0,))
    stats = BackwardStats(ran=frozenset(1000 + i for i in range(ops) if draw(st.booleans())))
    for e in edges:
        key = (1000 + e.source, e.slot)
        kind = draw(st.sampled_from(["stats-zero", "stats", "grad", "past-range", "nothing"]))
        if kind.startswith("stats"):
            zeros = 1.0 if kind == "stats-zero" else draw(st.sampled_from([0.0, 0.5]))
            stats.edges[key] = GradStats(1.0, 1.0, 1.0, zeros, 0, 0)
            stats.grads[key] = GRAD
        elif kind == "grad":
            stats.grads[key] = GRAD
        elif kind == "past-range":
            stats.past_range[key] = 1e308
    return walk, stats


@SETTINGS
@given(_graphs())
def test_statuses_are_the_rule_s(graph: tuple[WalkResult, BackwardStats]) -> None:
    walk, stats = graph
    got = param_statuses(walk, stats)
    expected = _expected(walk, stats)
    assert got == expected
    assert list(got) == list(expected)  # in the same order
