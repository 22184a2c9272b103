"""Merge what the tracer learned (logs, dump, layer scopes, parameters) into the walked graph.

Pure: takes plain data keyed by GradNode pointer, never Paddle objects, so it can be tested
and reused (e.g. by make_graph) without running a model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..graph.groups import with_ancestors
from ..graph.model import CallSite, Edge, GradInfo, Graph, Group, Node, ParamInfo, Slot


@dataclass(frozen=True)
class EdgeNote:
    """What is known about one edge: its gradient and the backward slot that produced it."""

    grad: GradInfo | None = None
    slot: str | None = None


@dataclass(frozen=True)
class NodeSlots:
    inputs: tuple[Slot, ...] = ()
    outputs: tuple[Slot, ...] = ()


@dataclass
class Annotations:
    """Everything known about a backward graph beyond its structure, keyed by GradNode ptr."""

    # (source ptr, index in the source's next_functions) -> that edge's gradient.
    edges: dict[tuple[int, int], EdgeNote] = field(default_factory=dict)
    slots: dict[int, NodeSlots] = field(default_factory=dict)
    groups: tuple[Group, ...] = ()
    group_of_ptr: dict[int, str] = field(default_factory=dict)
    params: dict[int, ParamInfo] = field(default_factory=dict)
    call_sites: dict[int, CallSite] = field(default_factory=dict)
    # Where the annotations came from ("vlog", "dump", ...) and what the user should know.
    sources: list[str] = field(default_factory=list)
    notice: str | None = None

    def add_edges(self, notes: dict[tuple[int, int], EdgeNote]) -> None:
        """Fill in what is still unknown; sources added earlier win."""
        for key, note in notes.items():
            old = self.edges.get(key)
            if old is None:
                self.edges[key] = note
            elif old.grad is None or old.slot is None:
                self.edges[key] = EdgeNote(old.grad or note.grad, old.slot or note.slot)


def _ptr(node: Node) -> int:
    return int(node.ptr, 16)


def _used_groups(groups: tuple[Group, ...], nodes: Iterable[Node]) -> tuple[Group, ...]:
    """Keep the groups that hold a node, and their ancestors, in the recorder's order."""
    keep = with_ancestors((n.group for n in nodes), {g.id: g.parent for g in groups})
    return tuple(g for g in groups if g.id in keep)


def annotate_graph(graph: Graph, ann: Annotations) -> Graph:
    # Direct constructor calls, not dataclasses.replace: this runs once per node and edge of
    # graphs with 10k+ of them, and replace() costs several times more.
    nodes = []
    no_slots = NodeSlots()
    for node in graph.nodes:
        ptr = _ptr(node)
        slots = ann.slots.get(ptr, no_slots)
        nodes.append(
            Node(
                id=node.id,
                name=node.name,
                ptr=node.ptr,
                kind=node.kind,
                group=ann.group_of_ptr.get(ptr, node.group),
                param=ann.params.get(ptr, node.param),
                call_site=ann.call_sites.get(ptr, node.call_site),
                inputs=slots.inputs or node.inputs,
                outputs=slots.outputs or node.outputs,
                tensor=node.tensor,
            )
        )
    ptr_of = {n.id: _ptr(n) for n in nodes}
    edges: list[Edge] = []
    for edge in graph.edges:
        note = ann.edges.get((ptr_of[edge.source], edge.index))
        if note is None:
            edges.append(edge)
        else:
            grad, slot = note.grad or edge.grad, note.slot or edge.slot
            edges.append(Edge(edge.id, edge.source, edge.target, edge.index, grad, slot))
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
