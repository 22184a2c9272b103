"""How the widget reaches the page: the front-end bundle anywidget loads, and the ``graph``
trait as one binary buffer of JSON text (js/kernel_sync.ts reads it)."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Mapping
from typing import Any

STATIC = pathlib.Path(__file__).parent.parent / "static"


def bundle(name: str) -> pathlib.Path:
    """A file of the front-end bundle (a Path: with ANYWIDGET_HMR=1 anywidget watches it)."""
    path = STATIC / name
    if not path.exists():
        raise RuntimeError(
            f"paddleviz_widget's front-end bundle ({path}) is missing. Install the package with "
            "'pip install .' (which builds it), or run 'npm ci && npm run build' in the source "
            "tree."
        )
    return path


def graph_to_json(graph: Mapping[str, Any], widget: Any) -> memoryview:
    # One binary buffer of JSON text: ipywidgets would otherwise walk every node, edge and
    # list of the payload looking for buffers, and Jupyter would encode it as nested JSON
    # (~85 ms + ~50 ms per 10k GradNodes, in the kernel, before the browser gets anything).
    text = json.dumps(graph, separators=(",", ":"))
    widget._graph_text = (graph, text)  # read once by the static picture (graph_json below)
    return memoryview(text.encode())


def graph_from_json(value: Any, widget: Any) -> Any:
    return json.loads(bytes(value)) if isinstance(value, (bytes, memoryview)) else value


def graph_json(graph: Mapping[str, Any], sent: tuple[Any, str] | None) -> str:
    """The graph as JSON text: ``sent``, the text made to send this graph to the page (that
    saves ~80 ms per 10k GradNodes), else made again."""
    if sent is not None and sent[0] is graph:
        return str(sent[1])
    return json.dumps(graph, separators=(",", ":"))
