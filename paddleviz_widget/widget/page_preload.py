"""The page's explorer started before the first GraphWidget is shown: a notebook's first widget
used to pay for importing the explorer (1.1 MB), starting its layout worker and compiling and
warming Graphviz up (~0.15-0.3 s of its cell, benchmarks/RESULTS.md round 17), while the cells
before it (building the model, running backward) left the page idle.

When ``paddleviz_widget.widget`` is imported in a kernel whose front end runs widgets
(JupyterLab, Notebook 7: late_picture.widget_front_end), one hidden model of the loader
(js/widget_loader.ts) is opened. It is never displayed; its ``initialize`` imports the explorer
into the page, which starts the shared layout worker (js/layout/shared.ts), and then says so; the
kernel closes the model. Later widgets find all of it in the page. Nothing is printed or shown;
elsewhere (a script, nbconvert, a terminal IPython) nothing is opened.
``PADDLEVIZ_WIDGET_PRELOAD=0`` turns it off.
"""

from __future__ import annotations

import os
from typing import Any

import anywidget
import traitlets

from .graph_widget import GraphWidget
from .late_picture import widget_front_end

#: What the loader sends once the explorer is imported and its worker runs.
PRELOADED = "pvw-preloaded"

_opened = False
#: The hidden model, once opened (closed once the page has the explorer).
preloaded: PagePreload | None = None


class PagePreload(anywidget.AnyWidget):
    """The hidden model; ``_preload`` tells the loader to report back (js/widget_loader.ts)."""

    # What GraphWidget sends (the loader, the explorer's source), read once, at its import.
    _esm = GraphWidget._esm
    _bundle = traitlets.Unicode(GraphWidget.class_traits()["_bundle"].default_value).tag(sync=True)
    _preload = traitlets.Bool(True).tag(sync=True)

    def __init__(self) -> None:
        super().__init__()
        self.on_msg(self._on_msg)

    def _on_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == PRELOADED:
            self.layout.close()  # the DOMWidget's own Layout model, opened with it
            self.close()


def wanted() -> bool:
    """Whether this kernel's page should get the explorer ahead of its first widget."""
    if os.environ.get("PADDLEVIZ_WIDGET_PRELOAD", "1") == "0":
        return False
    if not PagePreload._bundle.default_value:
        return False  # hot reload (DEVELOP.md): `_esm` is the explorer itself
    return widget_front_end()


def preload_page() -> PagePreload | None:
    """Open the hidden model once per kernel, if wanted; never raises (a page without it only
    starts the explorer with its first widget, as before)."""
    global _opened, preloaded
    if _opened:
        return None
    _opened = True
    try:
        if wanted():
            preloaded = PagePreload()
    except Exception:  # noqa: BLE001 - an optimisation must never break an import
        preloaded = None
    return preloaded
