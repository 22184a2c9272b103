"""How the widget reaches the page: the front-end bundle anywidget loads, and the ``graph``
trait as one binary buffer of JSON text (js/kernel_sync.ts reads it)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..export.bundle import bundle

__all__ = ["bundle", "graph_from_json", "graph_json", "graph_to_json", "json_bytes"]


def json_bytes(graph: Mapping[str, Any]) -> bytes:
    """Compact UTF-8 JSON of a graph document: orjson's (~6x faster than json's: 15 ms instead
    of 85 per 10k GradNodes), else json's. A document holds no NaN (graph/check.py)."""
    try:
        import orjson

        return bytes(orjson.dumps(graph))
    except Exception:  # noqa: BLE001 - not installed, or a value orjson does not take
        return json.dumps(graph, separators=(",", ":"), ensure_ascii=False).encode()


def graph_to_json(graph: Mapping[str, Any], widget: Any) -> memoryview:
    # One binary buffer of JSON text: ipywidgets would otherwise walk every node, edge and
    # list of the payload looking for buffers, and Jupyter would encode it as nested JSON
    # (~50 ms per 10k GradNodes, in the kernel, before the browser gets anything).
    data = json_bytes(graph)
    widget._graph_text = (graph, data)  # read once by the static picture (graph_json below)
    return memoryview(data)


def graph_from_json(value: Any, widget: Any) -> Any:
    return json.loads(bytes(value)) if isinstance(value, (bytes, memoryview)) else value


def graph_json(graph: Mapping[str, Any], sent: tuple[Any, bytes] | None) -> str:
    """The graph as JSON text: ``sent``, the bytes made to send this graph to the page, else
    made again."""
    data = sent[1] if sent is not None and sent[0] is graph else json_bytes(graph)
    return data.decode()
