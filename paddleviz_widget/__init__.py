"""paddleviz_widget: explore the backward (autograd) graph of a PaddlePaddle model in Jupyter."""

# Before anything imports paddle: Paddle 2.6's own zlib then cannot take Python's zlib module's
# calls over (compat/zlib_guard.py), for a script that imports this package first.
import zlib  # noqa: F401  # isort: skip

from .compat import make_graph
from .errors import GraphDocumentError, PaddlevizError, RunLogError, SourceFileError
from .graph import SCHEMA_VERSION
from .runs import open_run
from .sources import build_graph_from_dump, build_graph_from_jittor
from .tracer import TraceSession, build_graph, trace
from .tracer.layer_summary import summary

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "GraphDocumentError",
    "GraphWidget",
    "PaddlevizError",
    "RunLogError",
    "SourceFileError",
    "TraceSession",
    "__version__",
    "build_graph",
    "build_graph_from_dump",
    "build_graph_from_jittor",
    "make_graph",
    "open_run",
    "summary",
    "trace",
]


def __getattr__(name: str):  # noqa: ANN202 - module-level lazy attribute
    # The widget imports anywidget/ipywidgets; keep `build_graph` usable without a notebook stack.
    if name == "GraphWidget":
        from .widget import GraphWidget

        return GraphWidget
    raise AttributeError(f"module 'paddleviz_widget' has no attribute {name!r}")


# In JupyterLab and Notebook 7, the widget module now: the page starts the explorer while the
# next cells build the model (notebook_start.py, widget/page_preload.py).
from .notebook_start import start_widget_page as _start_widget_page  # noqa: E402

_start_widget_page()
