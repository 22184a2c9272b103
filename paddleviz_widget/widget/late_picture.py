"""The widget at once, its saved picture after: in a front end that runs widgets (JupyterLab,
Notebook 7), a displayed GraphWidget is published without its static picture, and the picture
(view rules in V8 and a ``dot`` layout: 0.1-0.3 s, more for the first one) is made on a worker
thread and sent as a second output of the same cell (an empty text until then), updated in
place by its display id, so the notebook saved afterwards holds it. The widget's CSS hides that
output wherever the widget runs (js/widget.css); where no widget runs (nbconvert, nbviewer,
GitHub) it is the picture.

Elsewhere (nbclient / ``nbconvert --execute``, which stop listening when a cell ends, or a
front end we cannot tell apart from it) the picture stays in the widget's own
output, made before it is shown, as before (static_picture.py)."""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ..notebook_start import in_widget_front_end
from .static_picture import counts_text, static_output
from .wire import graph_json

#: The page's message once a widget's first drawing is painted (js/kernel_sync.ts PAINTED).
PAINTED = "pvw-painted"
#: Longest a picture waits for that message from the display on: the page's first paint gets
#: the machine's cores (the picture is V8 and a `dot` process), and a page that never paints
#: (a hidden output, a kernel busy with the next cells) still gets its picture.
PAINT_WAIT_S = 3.0

#: Class of the second output; js/widget.css hides it (and its output row) in the live page.
LATE_CLASS = "pvw-static pvw-static-late"

_jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_worker: threading.Thread | None = None
_start_lock = threading.Lock()


def widget_front_end() -> bool:
    """Whether the cell runs in a front end that keeps a cell's outputs open after it ends:
    JupyterLab and Notebook 7 name the cell in each execute request (``cellId``), and their
    widget manager asks for the widgets' state on the ``jupyter.widget.control`` comm as it
    connects (ipywidgets keeps that comm). nbclient does neither."""
    try:
        from ipywidgets import Widget

        if getattr(Widget, "_control_comm", None) is not None:
            return True
    except Exception:  # noqa: BLE001 - unsure: the picture is made before the display
        return False
    return in_widget_front_end()  # the execute request names its cell


def show_then_draw(
    data: Mapping[str, Any],
    metadata: Mapping[str, Any],
    graph: Mapping[str, Any],
    sent: tuple[Any, bytes] | None,
    wanted: dict[str, Any],
    painted: threading.Event | None = None,
) -> None:
    """Display the widget (``data``: its bundle) now and its picture once made: after
    ``painted`` is set (the page drew the widget), or PAINT_WAIT_S after the display.
    ``sent``: the graph's JSON as sent to the page (wire.graph_to_json), if made."""
    from IPython.display import display

    display_id = f"pvw-static-{uuid.uuid4().hex}"
    display({**data, "text/plain": counts_text(graph)}, raw=True, metadata=dict(metadata))
    # Empty text first, the HTML picture later: an HTML output makes JupyterLab load and start
    # MathJax to typeset it (~0.2-0.4 s of the page's main thread), which would land in the
    # page's first widget before its graph is painted (tests/browser/test_late_picture_browser).
    display({"text/plain": ""}, raw=True, display_id=display_id)
    deadline = time.monotonic() + PAINT_WAIT_S

    def job() -> None:
        if painted is not None:
            painted.wait(max(0.0, deadline - time.monotonic()))
        _deliver(display_id, graph, lambda: graph_json(graph, sent), wanted)

    _submit(job)


def _late(block: str | None) -> str:
    return f'<div class="{LATE_CLASS}">{block or ""}</div>'


def _deliver(
    display_id: str,
    graph: Mapping[str, Any],
    graph_json: Callable[[], str],
    wanted: dict[str, Any],
) -> None:
    from IPython.display import update_display

    _, block = static_output(graph, graph_json, lambda: wanted)
    update_display({"text/html": _late(block)}, raw=True, display_id=display_id)


def _submit(job: Callable[[], None]) -> None:
    global _worker
    with _start_lock:
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_run, name="paddleviz-static-picture", daemon=True)
            _worker.start()
    _jobs.put(job)


def _run() -> None:
    while True:
        job = _jobs.get()
        try:
            job()
        except Exception:  # noqa: BLE001, S112 - a picture must never break the kernel
            continue


def wait_idle(timeout: float = 30.0) -> bool:
    """Wait until every picture asked for so far is sent (for tests and benchmarks)."""
    done = threading.Event()
    _submit(done.set)
    return done.wait(timeout)
