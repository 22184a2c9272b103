"""One side of a diff document (graph/diff.py), for what describes one graph: the Layers
tab's table. A diff holds both graphs' nodes, and its numbers are b's but for what is only in
a (removed): a table of the union counts a's removed layers' parameters into b's totals, a
number of neither graph. Pure data."""

from __future__ import annotations

from collections.abc import Mapping

from .parts import GraphParts


def b_side(graph: GraphParts) -> tuple[GraphParts, list[str]]:
    """Graph b of a diff: without the nodes and edges only in a, nor the layers that held
    only those; and the names of those layers. A graph that is no diff is returned as it is."""
    if not isinstance(graph.meta.get("diff"), Mapping):
        return graph, []
    parent = {g.id: g.parent for g in graph.groups}
    held: dict[str, bool] = {}  # group id -> whether it holds a node b has
    for n in graph.nodes:
        kept = n.diff is None or n.diff.status != "removed"
        gid, seen = n.group, 0
        while gid is not None and seen <= len(parent):
            held[gid] = held.get(gid, False) or kept
            gid, seen = parent.get(gid), seen + 1
    gone = {gid for gid, kept in held.items() if not kept}
    nodes = tuple(n for n in graph.nodes if n.diff is None or n.diff.status != "removed")
    ids = {n.id for n in nodes}
    edges = tuple(
        e for e in graph.edges
        if e.source in ids and e.target in ids and (e.diff is None or e.diff.status != "removed")
    )  # fmt: skip
    groups = tuple(g for g in graph.groups if g.id not in gone)
    names = [g.name for g in graph.groups if g.id in gone]
    return GraphParts(nodes, edges, groups, graph.meta), names
