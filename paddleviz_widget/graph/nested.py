"""``nested_dict``: any graph, or any graph document, in the 1.0 nested layout (every field
spelled out), for code written against 1.0."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .codec import decode_parts
from .codec_v1 import write_v1
from .parts import GraphParts


def nested_dict(graph: Any) -> dict[str, Any]:
    """The 1.0 nested layout of a Graph or of any graph document (2.0 or 1.0)."""
    if isinstance(graph, Mapping):
        return write_v1(decode_parts(graph))
    return write_v1(GraphParts(graph.nodes, graph.edges, graph.groups, graph.meta))
