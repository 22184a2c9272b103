"""Tracer: Paddle tensors and GradNodes in, pure graph data out."""

from .build import build_graph, trace_graph
from .capture.session import TraceSession
from .capture.trace_api import trace

__all__ = ["TraceSession", "build_graph", "trace", "trace_graph"]
