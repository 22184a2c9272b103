"""Graph model and schema: pure data shared by the tracer, the widget and paddleviz compat."""

from .codec import SCHEMA_VERSION
from .model import (
    GRAD_STATUSES,
    NODE_KINDS,
    CallSite,
    Edge,
    GradInfo,
    GradStats,
    Graph,
    Group,
    Node,
    ParamInfo,
    Slot,
    decode,
    encode,
)
from .nested import nested_dict
from .schema import load_schema, validate_graph_dict

__all__ = [
    "NODE_KINDS",
    "SCHEMA_VERSION",
    "CallSite",
    "Edge",
    "GRAD_STATUSES",
    "GradInfo",
    "GradStats",
    "Graph",
    "Group",
    "Node",
    "ParamInfo",
    "Slot",
    "decode",
    "encode",
    "load_schema",
    "nested_dict",
    "validate_graph_dict",
]
