"""The explorer's Layers tab (js/ui/layers_tab.ts) asks the kernel for the per-layer table
(graph/summary.py, the one implementation of its rows) when it is first opened, so building a
GraphWidget costs nothing more. A saved page with no kernel embeds the same message, made by
``layer_rows(graph)``, in its model's ``_layer_rows``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from ..graph.model import Graph
from ..graph.parts import GraphParts
from ..graph.summary import summarize

#: The custom message's ``type``, both ways: the page sends ``{"type", "id"}``; the kernel
#: answers ``{"type", "id", "rows", "total_params", "trainable_params"}`` or ``{"type", "id",
#: "error"}``.
LAYER_ROWS = "pvw-layer-rows"


def layer_rows(graph: Mapping[str, Any]) -> dict[str, Any]:
    """The per-layer table of a graph document as plain JSON (names as they are: the page
    shows them as text). Parameter counts are those of the parameters in the graph."""
    g = Graph.from_dict(graph)
    table = summarize(GraphParts(g.nodes, g.edges, g.groups, g.meta))
    return {
        "type": LAYER_ROWS,
        "rows": [asdict(row) for row in table.rows],
        "total_params": table.total_params,
        "trainable_params": table.trainable_params,
    }


class LayerRows:
    """Mixed into GraphWidget: answers the Layers tab's request. Reads ``graph`` only."""

    graph: Mapping[str, Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_msg(self._on_layer_rows_msg)  # type: ignore[attr-defined]  # Widget's

    def _on_layer_rows_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, Mapping) or content.get("type") != LAYER_ROWS:
            return  # another part's message
        try:
            reply = layer_rows(self.graph)
        except Exception as exc:  # a document the summary cannot read: the tab says why
            reply = {"type": LAYER_ROWS, "error": f"the layer table could not be made: {exc}"}
        self.send({**reply, "id": content.get("id")})  # type: ignore[attr-defined]  # Widget's
