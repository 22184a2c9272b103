"""Compatibility with the seed paddleviz tool."""

from .paddleviz import graph_to_digraph, make_graph

__all__ = ["graph_to_digraph", "make_graph"]
