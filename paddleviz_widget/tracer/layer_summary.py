"""``summary(y)``: the per-layer table of ``y``'s backward graph (graph/summary.py), with
parameter counts from the model (found by itself when not given, as build_graph does)."""

from __future__ import annotations

from typing import Any

from ..graph.parts import GraphParts
from ..graph.summary import Summary, summarize
from .build import trace_graph
from .capture.replay import discover_model
from .read.params import layer_param_counts


def summary(y: Any, *, model: Any = None, params: Any = None) -> Summary:
    """The per-layer table of ``y``'s backward graph: each layer's type, parameters (the
    model's own, frozen and hidden ones included: ``model=``, or the live nn.Layer owning the
    graph's parameters), GradNodes and gradient shapes in and out. ``print(summary(y))`` shows
    the table; ``y``, ``model`` and ``params`` as for ``build_graph``. A GraphWidget's own
    table is ``w.summary()`` (its parameter counts: those in the graph)."""
    graph = trace_graph(y, model=model, params=params)
    if model is None and params is None:
        accumulation = {int(n.ptr, 16) for n in graph.nodes if n.kind == "param"}
        model = discover_model(accumulation)
    counts = layer_param_counts(model) if model is not None else None
    return summarize(GraphParts(graph.nodes, graph.edges, graph.groups, graph.meta), counts)


__all__ = ["summary"]
