"""Render-independent graph data: what the tracer produces and the widget consumes.

Pure data (no Paddle, no Graphviz). Frozen dataclasses so a built graph can be shared
between the widget, the paddleviz-compatible Digraph and JSON without defensive copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = "1.0"

NODE_KINDS = ("op", "param", "output")


@dataclass(frozen=True)
class GradInfo:
    """The gradient that flows along one edge (or sits in one slot)."""

    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    place: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype,
            "shape": None if self.shape is None else list(self.shape),
            "place": self.place,
        }


@dataclass(frozen=True)
class ParamInfo:
    """The parameter (or leaf tensor) an accumulation node writes its gradient into."""

    name: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": None if self.shape is None else list(self.shape),
            "dtype": self.dtype,
        }


@dataclass(frozen=True)
class CallSite:
    """Where in user code the forward op that created a GradNode was called."""

    file: str
    line: int
    function: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "function": self.function}


@dataclass(frozen=True)
class Slot:
    """One named input or output of a GradNode's backward kernel (e.g. grad_out, x, grad_x)."""

    name: str
    tensor: str | None = None
    grad: GradInfo | None = None

    def to_dict(self) -> dict[str, Any]:
        info = self.grad.to_dict() if self.grad else {"dtype": None, "shape": None, "place": None}
        return {"name": self.name, "tensor": self.tensor, **info}


@dataclass(frozen=True)
class Node:
    id: str
    name: str
    ptr: str
    kind: str
    group: str | None = None
    param: ParamInfo | None = None
    call_site: CallSite | None = None
    inputs: tuple[Slot, ...] = ()
    outputs: tuple[Slot, ...] = ()
    # Shape/dtype of the user's tensor when this node is the grad_fn of one passed in.
    tensor: GradInfo | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "ptr": self.ptr,
            "kind": self.kind,
            "group": self.group,
            "param": self.param.to_dict() if self.param else None,
            "call_site": self.call_site.to_dict() if self.call_site else None,
            "inputs": [s.to_dict() for s in self.inputs],
            "outputs": [s.to_dict() for s in self.outputs],
            "tensor": self.tensor.to_dict() if self.tensor else None,
        }


@dataclass(frozen=True)
class Edge:
    """A backward edge: `source` hands a gradient to `target`, its next_functions[index]."""

    id: str
    source: str
    target: str
    index: int
    grad: GradInfo | None = None
    slot: str | None = None  # the backward output slot that sends it, e.g. "grad_x"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "target": self.target,
            "index": self.index,
            "grad": self.grad.to_dict() if self.grad else None,
            "slot": self.slot,
        }


@dataclass(frozen=True)
class Group:
    """An nn.Layer instance; `parent` links groups into the layer tree."""

    id: str
    name: str
    type: str
    parent: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "parent": self.parent}


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    groups: tuple[Group, ...] = ()
    # Free-form provenance: paddle version, where annotations came from, hints for the user.
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [e.to_dict() for e in self.edges],
            "groups": [g.to_dict() for g in self.groups],
            "meta": dict(self.meta),
        }
