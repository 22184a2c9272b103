"""Merge what the tracer learned (logs, dump, layer scopes, parameters) into the walked graph.

Pure: takes plain data keyed by GradNode pointer, never Paddle objects, so it can be tested
and reused (e.g. by make_graph) without running a model.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ..graph.model import CallSite, Edge, GradInfo, Graph, Group, Node, ParamInfo, Slot


@dataclass(frozen=True)
class NodeSlots:
    inputs: tuple[Slot, ...] = ()
    outputs: tuple[Slot, ...] = ()


@dataclass
class Annotations:
    """Everything known about a backward graph beyond its structure, keyed by GradNode ptr."""

    # (source ptr, target ptr) -> gradients of the edges between them, in slot order.
    edge_grads: dict[tuple[int, int], list[GradInfo]] = field(default_factory=dict)
    slots: dict[int, NodeSlots] = field(default_factory=dict)
    groups: tuple[Group, ...] = ()
    group_of_ptr: dict[int, str] = field(default_factory=dict)
    params: dict[int, ParamInfo] = field(default_factory=dict)
    call_sites: dict[int, CallSite] = field(default_factory=dict)
    # Where the annotations came from ("vlog", "dump", ...) and what the user should know.
    sources: list[str] = field(default_factory=list)
    notice: str | None = None

    def add_edge_grads(self, items: Iterable[tuple[int, int, GradInfo | None]]) -> None:
        for source, target, grad in items:
            if grad is not None:
                self.edge_grads.setdefault((source, target), []).append(grad)


def _ptr(node: Node) -> int:
    return int(node.ptr, 16)


def _used_groups(groups: tuple[Group, ...], nodes: Iterable[Node]) -> tuple[Group, ...]:
    """Keep the groups that hold a node, and their ancestors, in the recorder's order."""
    by_id = {g.id: g for g in groups}
    keep: set[str] = set()
    pending: deque[str | None] = deque(n.group for n in nodes)
    while pending:
        gid = pending.popleft()
        if gid is None or gid in keep or gid not in by_id:
            continue
        keep.add(gid)
        pending.append(by_id[gid].parent)
    return tuple(g for g in groups if g.id in keep)


def annotate_graph(graph: Graph, ann: Annotations) -> Graph:
    nodes = []
    for node in graph.nodes:
        ptr = _ptr(node)
        slots = ann.slots.get(ptr, NodeSlots())
        nodes.append(
            replace(
                node,
                group=ann.group_of_ptr.get(ptr, node.group),
                param=ann.params.get(ptr, node.param),
                call_site=ann.call_sites.get(ptr, node.call_site),
                inputs=slots.inputs or node.inputs,
                outputs=slots.outputs or node.outputs,
            )
        )
    ptr_of = {n.id: _ptr(n) for n in nodes}
    taken: dict[tuple[int, int], int] = defaultdict(int)
    edges: list[Edge] = []
    for edge in graph.edges:
        key = (ptr_of[edge.source], ptr_of[edge.target])
        grads = ann.edge_grads.get(key, [])
        k = taken[key]
        taken[key] += 1
        # Parallel edges (x * x) are matched in slot order; a missing one keeps its old grad.
        edges.append(replace(edge, grad=grads[k] if k < len(grads) else edge.grad))
    meta = dict(graph.meta)
    meta["annotations"] = sorted(set(ann.sources))
    if ann.notice:
        meta["notice"] = ann.notice
    return Graph(
        nodes=tuple(nodes),
        edges=tuple(edges),
        groups=_used_groups(ann.groups, nodes) or graph.groups,
        meta=meta,
    )
