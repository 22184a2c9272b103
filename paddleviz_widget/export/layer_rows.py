"""The Layers tab's rows (js/ui/layers_tab.ts, js/view/layer_rows.ts), one custom message both
ways. The page sends ``{"type": LAYER_ROWS, "id"}`` when the tab is first opened, so building a
GraphWidget costs nothing more; the kernel answers ``{"type", "id", "rows", "total_params",
"trainable_params", "counting"}`` or ``{"type", "id", "error"}`` (``answer``). A saved page,
with no kernel to ask, embeds ``layer_rows(graph)`` in its model's ``_layer_rows``
(standalone.py). The rows themselves are graph/summary.py's, the one implementation of the
per-layer table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from ..graph.diff_side import b_side
from ..graph.model import Graph
from ..graph.parts import GraphParts
from ..graph.summary import summarize

#: The custom message's ``type``, both ways.
LAYER_ROWS = "pvw-layer-rows"


def layer_rows(graph: Mapping[str, Any]) -> dict[str, Any]:
    """The per-layer table of a graph document as plain JSON (names as they are: the page
    shows them as text). Parameter counts are graph/summary.py's, ``counting`` its footer's
    words; of a diff, graph b's, and ``note`` says so (the union's were a number of neither
    graph)."""
    g = Graph.from_dict(graph)
    parts, left_out = b_side(GraphParts(g.nodes, g.edges, g.groups, g.meta))
    table = summarize(parts)
    reply: dict[str, Any] = {
        "type": LAYER_ROWS,
        "rows": [asdict(row) for row in table.rows],
        "total_params": table.total_params,
        "trainable_params": table.trainable_params,
        "counting": table.counting,  # what the counts leave out, if anything (the footer's)
    }
    info = g.meta.get("diff")
    labels = info.get("labels") if isinstance(info, Mapping) else None
    if isinstance(labels, list) and len(labels) == 2:
        n = len(left_out)
        only = f"; {n} layer{'s' if n > 1 else ''} only in {labels[0]} left out" if n else ""
        reply["note"] = f"The layers of {labels[1]}, the diff's second graph{only}."
    return reply


def answer(content: Any, graph: Mapping[str, Any]) -> dict[str, Any] | None:
    """The kernel's reply to a message from the page; None for another part's message."""
    if not isinstance(content, Mapping) or content.get("type") != LAYER_ROWS:
        return None
    try:
        reply = layer_rows(graph)
    except Exception as exc:  # a document the summary cannot read: the tab says why
        reply = {"type": LAYER_ROWS, "error": f"the layer table could not be made: {exc}"}
    return {**reply, "id": content.get("id")}
