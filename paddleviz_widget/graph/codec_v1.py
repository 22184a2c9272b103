"""The schema 1.0 layout: every node, slot and edge spelled out in full, nulls included.

``decode`` (graph/codec.py) reads it, so documents saved before 2.0 still load;
``nested_dict`` writes it, for code that reads the nested layout (``n["param"]["name"]``,
``e["grad"]["shape"]``): ``nested_dict(build_graph(y))``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .parts import CallSite, Edge, GradInfo, GradStats, GraphParts, Group, Node, ParamInfo, Slot

V1 = "1.0"


def _grad(g: GradInfo | None) -> dict[str, Any] | None:
    if g is None:
        return None
    return {"dtype": g.dtype, "shape": None if g.shape is None else list(g.shape), "place": g.place}


_NO_GRAD = ("dtype", "shape", "place")  # a slot's gradient fields, flattened into it


def _slot(s: Slot) -> dict[str, Any]:
    return {"name": s.name, "tensor": s.tensor, **(_grad(s.grad) or dict.fromkeys(_NO_GRAD))}


def _node(n: Node) -> dict[str, Any]:
    p, c = n.param, n.call_site
    return {
        "id": n.id,
        "name": n.name,
        "ptr": n.ptr,
        "kind": n.kind,
        "group": n.group,
        "param": None if p is None else {"name": p.name, "shape": _list(p.shape), "dtype": p.dtype},
        "call_site": None
        if c is None
        else {"file": c.file, "line": c.line, "function": c.function},
        "inputs": [_slot(s) for s in n.inputs],
        "outputs": [_slot(s) for s in n.outputs],
        "tensor": _grad(n.tensor),
        # 2.1's fields only where a graph has them, so a 1.0 graph's layout stays exactly 1.0.
        **({} if n.grad_status is None else {"grad_status": n.grad_status}),
    }


def _stats(s: GradStats) -> dict[str, Any]:
    return {f: getattr(s, f) for f in GradStats.FIELDS}


def _list(shape: tuple[int, ...] | None) -> list[int] | None:
    return None if shape is None else list(shape)


def write_v1(graph: GraphParts) -> dict[str, Any]:
    """The 1.0 nested layout of a graph's parts."""
    return {
        "schema_version": V1,
        "nodes": [_node(n) for n in graph.nodes],
        "edges": [
            {
                "id": e.id,
                "source": e.source,
                "target": e.target,
                "index": e.index,
                "grad": _grad(e.grad),
                "slot": e.slot,
                **({} if e.stats is None else {"stats": _stats(e.stats)}),
            }
            for e in graph.edges
        ],
        "groups": [
            {"id": g.id, "name": g.name, "type": g.type, "parent": g.parent} for g in graph.groups
        ],
        "meta": dict(graph.meta),
    }


def _tuple(shape: Any) -> tuple[int, ...] | None:
    # A list, else kept as it is for check_parts to name ("4x4" is not a shape).
    return tuple(shape) if isinstance(shape, list) else shape


def _grad_in(d: Mapping[str, Any] | None) -> GradInfo | None:
    if d is None:
        return None
    return GradInfo(d.get("dtype"), _tuple(d.get("shape")), d.get("place"))


def _slot_in(d: Mapping[str, Any]) -> Slot:
    # 1.0 flattens a slot's gradient into it; all three unknown means no gradient.
    known = any(d.get(k) is not None for k in _NO_GRAD)
    return Slot(d["name"], d.get("tensor"), _grad_in(d) if known else None)


def decode_v1(doc: Mapping[str, Any], at: Any = None) -> GraphParts:
    """The parts of a 1.0 document; ``at.field`` follows the entry being read, for errors."""
    at = at if at is not None else type("At", (), {"field": ""})()
    nodes = []
    for k, n in enumerate(doc["nodes"]):
        at.field = f"nodes[{k}]"
        p, c = n.get("param"), n.get("call_site")
        nodes.append(
            Node(
                id=n["id"],
                name=n["name"],
                ptr=n["ptr"],
                kind=n["kind"],
                group=n.get("group"),
                param=None
                if p is None
                else ParamInfo(p["name"], _tuple(p.get("shape")), p.get("dtype")),
                call_site=None if c is None else CallSite(c["file"], c["line"], c.get("function")),
                inputs=tuple(_slot_in(s) for s in n.get("inputs") or ()),
                outputs=tuple(_slot_in(s) for s in n.get("outputs") or ()),
                tensor=_grad_in(n.get("tensor")),
                grad_status=n.get("grad_status"),
            )
        )
    edges = []
    for k, e in enumerate(doc["edges"]):
        at.field = f"edges[{k}]"
        stats = e.get("stats")
        edges.append(
            Edge(
                e["id"],
                e["source"],
                e["target"],
                e.get("index", 0),
                _grad_in(e.get("grad")),
                e.get("slot"),
                None if stats is None else GradStats(**stats),
            )
        )
    groups = []
    for k, g in enumerate(doc["groups"]):
        at.field = f"groups[{k}]"
        groups.append(Group(g["id"], g["name"], g["type"], g.get("parent")))
    return GraphParts(tuple(nodes), tuple(edges), tuple(groups), dict(doc.get("meta") or {}))
