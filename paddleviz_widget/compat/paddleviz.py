"""The seed paddleviz API: ``make_graph(y, dpi="600")`` returning a ``graphviz.Digraph``.

Built from the same graph data as the widget, so it needs neither ``GLOG_v`` nor ``run.py``:
edge labels come from whatever annotations the tracer found.
"""

from __future__ import annotations

from typing import Any

from ..graph.model import Edge, GradInfo, Graph, Node
from ..tracer.build import trace_graph

_OP_STYLE = {"shape": "box", "style": "rounded,filled", "fillcolor": "#e8eef5"}
_OUTPUT_STYLE = {"shape": "box", "style": "rounded,filled,bold", "fillcolor": "#bbdefb"}
_PARAM_STYLE = {"shape": "ellipse", "style": "filled", "fillcolor": "#b7e4c7"}


def _node_label(node: Node) -> str:
    if node.kind == "param" and node.param is not None:
        shape = "" if node.param.shape is None else f"\\n{list(node.param.shape)}"
        return f"{node.param.name}{shape}"
    return node.name


def _edge_label(grad: GradInfo | None) -> str:
    if grad is None:
        return ""
    shape = "?" if grad.shape is None else str(list(grad.shape))
    return "\\n".join([grad.dtype or "?", grad.place or "?", shape])  # DOT's escaped newline


def graph_to_digraph(graph: Graph, dpi: str = "600") -> Any:
    """Draw a Graph as the seed did: one node per GradNode, accumulation nodes as ellipses,
    edges labelled dtype/place/shape, gradients flowing bottom-to-top (rankdir=BT)."""
    import graphviz

    dot = graphviz.Digraph(
        "paddleviz",
        graph_attr={"rankdir": "BT", "dpi": str(dpi), "fontname": "Helvetica"},
        node_attr={"fontname": "Helvetica", "fontsize": "11", "height": "0.3"},
        edge_attr={"fontname": "Helvetica", "fontsize": "9"},
    )
    for node in graph.nodes:
        style = {"param": _PARAM_STYLE, "output": _OUTPUT_STYLE}.get(node.kind, _OP_STYLE)
        dot.node(node.id, _node_label(node), **style)
    edge: Edge
    for edge in graph.edges:
        # The seed drew input -> consumer, i.e. the forward direction, with rankdir=BT.
        dot.edge(edge.target, edge.source, label=_edge_label(edge.grad))
    return dot


def make_graph(y: Any, dpi: str = "600", *, model: Any = None, params: Any = None) -> Any:
    """paddleviz's ``make_graph``: the backward graph of ``y`` as a ``graphviz.Digraph``."""
    return graph_to_digraph(trace_graph(y, model=model, params=params), dpi=dpi)
