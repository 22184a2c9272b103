"""How a GraphWidget shows itself outside its own view: the output bundle a notebook saves
(a static picture and a text beside the widget), IPython's display (the picture made after
the widget is shown: late_picture.py), and ``repr()`` where no front end runs (a plain
``python`` prompt, a log line): the same one line IPython's terminal prints."""

from __future__ import annotations

from typing import Any

from .late_picture import show_then_draw, widget_front_end
from .static_picture import closed_text, counts_text, static_output
from .wire import graph_json


class ShownGraph:
    """Mixed into GraphWidget ahead of anywidget.AnyWidget (its ``super()`` is the widget's)."""

    graph: dict[str, Any]
    comm: Any
    _painted: Any

    def _view_now(self) -> dict[str, Any]:
        raise NotImplementedError  # GraphWidget's

    def __repr__(self) -> str:
        if self.comm is None:
            return closed_text(self.graph)
        return counts_text(self.graph)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # Beside the widget: a static picture and a text for where no widget runs.
        result = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if result is None:  # no view (anywidget's answer without a _view_name)
            return None
        data, metadata = result if isinstance(result, tuple) else (result, {})
        sent = self.__dict__.pop("_graph_text", None)  # wire.graph_to_json's, used once
        graph_text = lambda: graph_json(self.graph, sent)  # noqa: E731 - made only if needed
        text, block = static_output(self.graph, graph_text, self._view_now)
        return {**data, "text/plain": text, "text/html": block}, metadata

    def _ipython_display_(self) -> None:
        # How IPython shows the widget. Where widgets run, the picture for saved notebooks is
        # made after the widget is shown, off the cell's time (late_picture.py).
        from IPython.display import display

        if self.comm is None:  # closed: ipywidgets' close() left no view to make, only words
            return display({"text/plain": closed_text(self.graph)}, raw=True)
        late = widget_front_end()
        result = super()._repr_mimebundle_() if late else self._repr_mimebundle_()  # type: ignore[misc]
        if result is None:  # no view (anywidget's answer without a _view_name)
            return
        data, metadata = result if isinstance(result, tuple) else (result, {})
        if not late:
            return display(data, raw=True, metadata=metadata)
        sent = self.__dict__.pop("_graph_text", None)
        show_then_draw(data, metadata, self.graph, sent, self._view_now(), self._painted)
