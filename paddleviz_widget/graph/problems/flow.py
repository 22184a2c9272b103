"""How the gradient flows through a graph with statistics: per edge norms, and what enters and
leaves each layer group and each GradNode along the backward. Pure: reads GraphParts.

Several edges combine as the square root of the sum of their squared norms: the norm of the
gradients taken together, as if concatenated (what clip_grad_norm calls the total norm)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..parts import Edge, GraphParts, Node


def combined(norms: Iterable[float]) -> float:
    return math.sqrt(sum(n * n for n in norms))


@dataclass
class Flow:
    """In and out norms by layer group and by op node. Only complete, finite accounts: a group
    or node with an edge that has no statistics (or a NaN/Inf) gets no entry."""

    graph: GraphParts
    nodes: dict[str, Node] = field(default_factory=dict)
    chain: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # node -> its groups, inner first
    group_name: dict[str, str] = field(default_factory=dict)
    group_in: dict[str, list[Edge]] = field(default_factory=dict)
    group_out: dict[str, list[Edge]] = field(default_factory=dict)
    node_in: dict[str, list[Edge]] = field(default_factory=dict)
    node_out: dict[str, list[Edge]] = field(default_factory=dict)
    parent: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, graph: GraphParts) -> Flow:
        flow = cls(graph)
        flow.parent = parent = {g.id: g.parent for g in graph.groups}
        flow.group_name = {g.id: g.name for g in graph.groups}
        chains: dict[str | None, tuple[str, ...]] = {None: ()}  # one per group, shared
        for n in graph.nodes:
            flow.nodes[n.id] = n
            chain = chains.get(n.group)
            if chain is None:
                found, g = [], n.group
                while g is not None and g not in found:
                    found.append(g)
                    g = parent.get(g)
                chain = chains[n.group] = tuple(found)
            flow.chain[n.id] = chain
        node_in, node_out, nodes = flow.node_in, flow.node_out, flow.nodes
        for e in graph.edges:
            node_in.setdefault(e.target, []).append(e)
            node_out.setdefault(e.source, []).append(e)
            if nodes[e.target].kind == "param":
                continue  # into a parameter: not toward the inputs, not through the layer
            src, dst = flow.chain[e.source], flow.chain[e.target]
            if src is dst:
                continue  # inside one layer (chains are shared per group): most edges
            # Chains run inner to outer and end at a shared root: what is not shared is left
            # (source side) and entered (target side).
            shared = 0
            while shared < min(len(src), len(dst)) and src[-1 - shared] == dst[-1 - shared]:
                shared += 1
            for g in dst[: len(dst) - shared]:
                flow.group_in.setdefault(g, []).append(e)
            for g in src[: len(src) - shared]:
                flow.group_out.setdefault(g, []).append(e)
        return flow

    def layer_of(self, node_id: str) -> str | None:
        chain = self.chain.get(node_id)
        return self.group_name.get(chain[0]) if chain else None

    def site_of(self, node_id: str) -> str | None:
        n = self.nodes.get(node_id)
        s = n.call_site if n is not None else None
        return f"{s.file}:{s.line}" if s is not None else None

    def ancestors(self, gid: str) -> set[str]:
        """Groups holding ``gid`` (itself excluded)."""
        parent = self.parent
        out, g = set(), parent.get(gid)
        while g is not None and g not in out:
            out.add(g)
            g = parent.get(g)
        return out


def norm_of(edges: list[Edge]) -> float | None:
    """Combined norm; None unless every edge has finite statistics."""
    total = 0.0
    for e in edges:
        s = e.stats
        if s is None or s.nan or s.inf:
            return None
        total += s.norm * s.norm
    return math.sqrt(total) if edges else None


def toward_inputs(flow: Flow, edges: list[Edge]) -> list[Edge]:
    return [e for e in edges if flow.nodes[e.target].kind != "param"]


def node_factor(flow: Flow, node_id: str) -> float | None:
    """What a GradNode sends toward the inputs over what it received; None if not known."""
    received = norm_of(flow.node_in.get(node_id, []))
    sent = norm_of(toward_inputs(flow, flow.node_out.get(node_id, [])))
    if received is None or sent is None or received == 0:
        return None
    return sent / received


def group_factor(flow: Flow, gid: str) -> float | None:
    """Gradient leaving the group toward the inputs over the gradient entering it."""
    entered = norm_of(flow.group_in.get(gid, []))
    left = norm_of(flow.group_out.get(gid, []))
    if entered is None or left is None or entered == 0:
        return None
    return left / entered
