"""The graph the tracer produces and the widget consumes: its parts (parts.py) and ``Graph``,
which reads and writes the JSON document through the codec (codec.py; the codec knows only
the parts, so nothing imports back here)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .codec import decode_parts, encode_parts
from .parts import (
    GRAD_STATUSES,
    NODE_KINDS,
    CallSite,
    Edge,
    GradInfo,
    GradStats,
    GraphParts,
    Group,
    Node,
    ParamInfo,
    Slot,
)

__all__ = [
    "NODE_KINDS",
    "CallSite",
    "Edge",
    "GRAD_STATUSES",
    "GradInfo",
    "GradStats",
    "Graph",
    "GraphParts",
    "Group",
    "Node",
    "ParamInfo",
    "Slot",
    "decode",
    "encode",
]


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    groups: tuple[Group, ...] = ()
    # Free-form provenance: paddle version, where annotations came from, hints for the user.
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (schema 2.3, graph/codec.py): normalized, sparse."""
        return encode_parts(GraphParts(self.nodes, self.edges, self.groups, self.meta))

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Graph:
        """The Graph of a JSON document, schema 2.x or 1.0; ValueError if it is broken."""
        return cls(*decode_parts(doc))


def encode(graph: Graph) -> dict[str, Any]:
    """The schema 2.3 document of ``graph``."""
    return graph.to_dict()


def decode(doc: Mapping[str, Any]) -> Graph:
    """The Graph of a schema 2.x or 1.0 document; ValueError says what is wrong with it."""
    return Graph.from_dict(doc)
