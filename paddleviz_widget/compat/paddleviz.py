"""The seed paddleviz API: ``make_graph(y, dpi="600")`` returning a ``graphviz.Digraph``.

Built from the same graph data as the widget, so it needs neither ``GLOG_v`` nor ``run.py``:
edge labels come from whatever annotations the tracer found.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

from ..graph.model import Edge, GradInfo, Graph, Node
from ..tracer.build import trace_graph
from ..visible_text import visible_text

_OP_STYLE = {"shape": "box", "style": "rounded,filled", "fillcolor": "#e8eef5"}
_OUTPUT_STYLE = {"shape": "box", "style": "rounded,filled,bold", "fillcolor": "#bbdefb"}
_CAPTION_WIDTH = 100  # characters per caption line: a notice is one long sentence
_PARAM_STYLE = {"shape": "ellipse", "style": "filled", "fillcolor": "#b7e4c7"}


# XML 1.0 has no place for most C0 controls (Graphviz would copy them into an SVG raw); a lone
# surrogate (a name made from bytes that are not UTF-8: os.fsdecode's escapes) has no UTF-8, so
# the graphviz package could not write the source file.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _label(*lines: str) -> Any:
    """A label Graphviz shows as exactly these lines. Names come from user code: backslashes are
    doubled (else \\N, \\G, \\l, ... are Graphviz escapes), `&` is written `&amp;` (else `&lt;`
    shows as "<"), newlines become DOT's escaped newline, and the whole is marked as no HTML
    (else a name like `<b>x</b>` is an HTML-like label). The graphviz package escapes quotes."""
    import graphviz

    def text(line: str) -> str:
        line = line.replace("\r\n", "\n").replace("\r", "\n")
        line = _NOT_XML.sub("\ufffd", visible_text(line))
        return line.replace("\\", "\\\\").replace("&", "&amp;").replace("\n", "\\n")

    return graphviz.nohtml("\\n".join(text(line) for line in lines))


def _node_label(node: Node) -> Any:
    if node.kind == "param" and node.param is not None:
        shape = () if node.param.shape is None else (str(list(node.param.shape)),)
        return _label(node.param.name, *shape)
    return _label(node.name)


def _edge_label(grad: GradInfo | None) -> Any:
    if grad is None:
        return ""
    shape = "?" if grad.shape is None else str(list(grad.shape))
    return _label(grad.dtype or "?", grad.place or "?", shape)


def graph_to_digraph(graph: Graph, dpi: str = "600") -> Any:
    """Draw a Graph as the seed did: one node per GradNode, accumulation nodes as ellipses,
    edges labelled dtype/place/shape, gradients flowing bottom-to-top (rankdir=BT); the
    graph's notices (why some labels are missing) as a caption under it."""
    import graphviz

    dot = graphviz.Digraph(
        "paddleviz",
        graph_attr={"rankdir": "BT", "dpi": str(dpi), "fontname": "Helvetica"},
        node_attr={"fontname": "Helvetica", "fontsize": "11", "height": "0.3"},
        edge_attr={"fontname": "Helvetica", "fontsize": "9"},
    )
    notices = _notices(graph)
    if notices:  # why labels are missing: said under the picture, as the widget says it
        lines = [part for notice in notices for part in textwrap.wrap(notice, _CAPTION_WIDTH)]
        dot.attr(label=_label(*lines), labelloc="b", fontsize="10")
    for node in graph.nodes:
        style = {"param": _PARAM_STYLE, "output": _OUTPUT_STYLE}.get(node.kind, _OP_STYLE)
        dot.node(node.id, _node_label(node), **style)
    edge: Edge
    for edge in graph.edges:
        # The seed drew input -> consumer, i.e. the forward direction, with rankdir=BT.
        dot.edge(edge.target, edge.source, label=_edge_label(edge.grad))
    return dot


def _notices(graph: Graph) -> list[str]:
    """The graph's notices, as the explorer reads them (``meta.notices``, else ``meta.notice``;
    js/view/pylayers.ts noticeLines)."""
    many = graph.meta.get("notices")
    if isinstance(many, list):
        return [n for n in many if isinstance(n, str) and n]
    one = graph.meta.get("notice")
    return [one] if isinstance(one, str) and one else []


def make_graph(y: Any, dpi: str = "600", *, model: Any = None, params: Any = None) -> Any:
    """paddleviz's ``make_graph``: the backward graph of ``y`` as a ``graphviz.Digraph``."""
    return graph_to_digraph(trace_graph(y, model=model, params=params), dpi=dpi)
