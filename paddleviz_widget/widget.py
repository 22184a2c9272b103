"""GraphWidget: the anywidget that shows a backward graph in Jupyter."""

from __future__ import annotations

import pathlib
from typing import Any

import anywidget
import traitlets

from .tracer import build_graph

_STATIC = pathlib.Path(__file__).parent / "static"


def _bundle(name: str) -> pathlib.Path:
    path = _STATIC / name
    if not path.exists():
        raise RuntimeError(
            f"paddleviz_widget's front-end bundle ({path}) is missing. Install the package "
            "with 'pip install .' (which builds it), or run 'npm ci && npm run build' in the "
            "source tree."
        )
    return path


class GraphWidget(anywidget.AnyWidget):
    """Interactive view of the backward graph of ``y``.

    ``y`` is a paddle.Tensor, or a list/tuple/dict of them. The graph is built once, in the
    constructor, into plain JSON: the widget holds no reference to tensors or GradNodes.
    """

    _esm = _bundle("widget.js")
    _css = _bundle("widget.css")

    graph = traitlets.Dict().tag(sync=True)
    height = traitlets.Unicode("600px").tag(sync=True)

    def __init__(
        self,
        y: Any,
        *,
        model: Any = None,
        params: Any = None,
        height: str | int = "600px",
        **kwargs: Any,
    ) -> None:
        payload = build_graph(y, model=model, params=params)
        if isinstance(height, int):
            height = f"{height}px"
        super().__init__(graph=payload, height=height, **kwargs)
