"""Tracer: Paddle tensors and GradNodes in, pure graph data out."""

from .build import build_graph, trace_graph

__all__ = ["build_graph", "trace_graph"]
