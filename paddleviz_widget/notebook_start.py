"""The widget module imported with the package, in a notebook whose front end runs widgets:
its import starts the page's explorer (widget/page_preload.py) while the user's next cells
build the model and run backward. A notebook that imports the package for ``trace`` in its
first cell and shows ``GraphWidget(y)`` in a later one then finds the explorer, its layout
worker and Graphviz started in the page (benchmarks/RESULTS.md, round 18: the first widget's
cell ~0.3 s sooner). Elsewhere (a script, the CLI, nbclient, a terminal IPython) the widget
module stays unimported until asked for: ``build_graph`` needs no notebook stack."""

from __future__ import annotations

import importlib
import sys


def in_widget_front_end() -> bool:
    """The cell runs in JupyterLab or Notebook 7 (their execute requests name the cell), told
    without importing ipywidgets (~0.1-0.2 s) where it would not be needed."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent() if kernel is not None else None
        return bool(isinstance(parent, dict) and (parent.get("metadata") or {}).get("cellId"))
    except Exception:  # noqa: BLE001 - unsure: leave the widget module for later
        return False


def start_widget_page() -> None:
    """Import the widget module now where a notebook page will show widgets; never raises (an
    error there reaches the user when they ask for GraphWidget, with its own message)."""
    if "paddleviz_widget.widget" in sys.modules or not in_widget_front_end():
        return
    try:
        importlib.import_module("paddleviz_widget.widget")
    except Exception:  # noqa: BLE001 - an optimisation must never break the package's import
        return
