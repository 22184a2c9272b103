"""Graphs made elsewhere: Paddle's backward dump directory, Jittor's trace data.

Each source turns files or data recorded on another machine into the same ``Graph`` the tracer
builds from live tensors, so the widget, the JSON document and paddleviz compat all apply.
"""

from .jittor import build_graph_from_jittor, load_jittor_graph
from .paddle_dump_dir import DumpFiles, build_graph_from_dump, list_dumps, load_dump_graph

__all__ = [
    "DumpFiles",
    "build_graph_from_dump",
    "build_graph_from_jittor",
    "list_dumps",
    "load_dump_graph",
    "load_jittor_graph",
]
