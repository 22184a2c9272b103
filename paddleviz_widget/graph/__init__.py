"""Graph model and schema: pure data shared by the tracer, the widget and paddleviz compat."""

from .model import (
    NODE_KINDS,
    SCHEMA_VERSION,
    CallSite,
    Edge,
    GradInfo,
    Graph,
    Group,
    Node,
    ParamInfo,
    Slot,
)
from .schema import load_schema, validate_graph_dict

__all__ = [
    "NODE_KINDS",
    "SCHEMA_VERSION",
    "CallSite",
    "Edge",
    "GradInfo",
    "Graph",
    "Group",
    "Node",
    "ParamInfo",
    "Slot",
    "load_schema",
    "validate_graph_dict",
]
