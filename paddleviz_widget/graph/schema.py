"""The JSON Schema that every document `build_graph` returns must satisfy (schema 2.3).

The schema file ships inside the package (paddleviz_widget/schema/graph.schema.json) so that
the Python tests, the JS tests and third-party consumers all check against the same text.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from .codec import decode_parts
from .parts import GraphParts


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    text = resources.files("paddleviz_widget").joinpath("schema/graph.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


def validate_graph_dict(payload: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` if ``payload`` does not match the schema.

    Also checks what JSON Schema cannot express (``ValueError``): every table index points
    into its table, ids are unique, and edges/groups point at ids that exist.
    """
    try:
        import jsonschema
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "validate_graph_dict needs the 'jsonschema' package: pip install jsonschema"
        ) from exc
    jsonschema.validate(payload, load_schema())
    _check_references(decode_parts(payload))


def _check_references(graph: GraphParts) -> None:
    node_ids = [n.id for n in graph.nodes]
    group_ids = [g.id for g in graph.groups]
    edge_ids = [e.id for e in graph.edges]
    for label, ids in (("node", node_ids), ("group", group_ids), ("edge", edge_ids)):
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate {label} ids in graph payload")
    nodes, groups = set(node_ids), set(group_ids)
    for edge in graph.edges:
        if edge.source not in nodes or edge.target not in nodes:
            raise ValueError(f"edge {edge.id} points at a node that does not exist")
    for node in graph.nodes:
        if node.group is not None and node.group not in groups:
            raise ValueError(f"node {node.id} is in unknown group {node.group}")
    for group in graph.groups:
        if group.parent is not None and group.parent not in groups:
            raise ValueError(f"group {group.id} has unknown parent {group.parent}")
