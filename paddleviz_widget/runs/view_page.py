"""``run_html(run)``: the run explorer as one self-contained HTML file (``python -m
paddleviz_widget view RUN_DIR -o run.html``), as export/standalone.py makes one for a graph.

The page runs the run explorer's own front end (``static/run_widget.js``, with the explorer,
the Graphviz WASM and the layout worker inside it) on a stand-in model, booted by
``static/run_standalone.js``. It holds the whole run: the matrices and every step's
per-parameter summary as base64 of gzip (float32/float64, as the widget gets them from the
kernel), and each fully captured step's graph document and Layers table as JSON. Text written
into the page goes through ``script_json`` (no markup can be closed or opened by a name).
"""

from __future__ import annotations

import base64
import gzip
import os
from pathlib import Path
from typing import Any

from ..export.save import _write_atomically
from ..export.standalone import (
    BUNDLE_ID,
    HOST_ID,
    PAGE_CSS,
    STATE_ID,
    _script_text,
    _static,
    _title_text,
    script_json,
)
from .view_data import RunLike, run_buffers, run_description, summary_matrix

#: Element ids js/run_standalone.ts reads (PAGE_IDS there), beside standalone.py's.
DATA_ID = "pvw-run-data"
GRAPHS_ID = "pvw-run-graphs"


def _packed(data: bytes) -> str:
    # mtime=0: the same run gives the same page.
    return base64.b64encode(gzip.compress(data, compresslevel=6, mtime=0)).decode("ascii")


def _graphs(run: RunLike) -> dict[str, Any]:
    from ..export.layer_rows import layer_rows

    graphs: dict[str, Any] = {}
    for step in run.captured_steps:
        try:
            graph = run.graph(step)
        except Exception:  # noqa: BLE001 - a damaged capture: the step shows its summary
            continue
        try:
            rows: Any = layer_rows(graph)
        except ValueError as error:
            rows = {"error": f"no layer table: {error}"}
        graphs[str(int(step))] = {"graph": graph, "layer_rows": rows}
    return graphs


def run_html(run: RunLike, *, title: str | None = None, height: str = "100vh") -> str:
    """The text of one HTML file showing run log ``run`` (the reader's RunLog) in the run
    explorer: offline, from ``file://``, with no kernel. A snapshot: a run still being written
    shows the steps it had when the page was made."""
    buffers = run_buffers(run)
    data = {
        "steps": _packed(buffers["steps"]),
        "loss": _packed(buffers["loss"]),
        "norms": _packed(buffers["norms"]),
        "bad": _packed(buffers["bad"]),
        "summaries": _packed(summary_matrix(run).astype("<f4").tobytes()),
    }
    description = run_description(run)
    state = {"run": description, "height": height, "step": -1, "layer": ""}
    name = title if title is not None else f"Run {Path(str(run.path)).name} (paddleviz_widget)"
    return "".join(
        [
            '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{_title_text(name)}</title>\n",
            f"<style>\n{PAGE_CSS}\n{_static('run_widget.css')}\n</style>\n</head>\n<body>\n",
            f'<div id="{HOST_ID}"></div>\n',
            "<noscript>This page draws a training run with JavaScript: allow it to run."
            "</noscript>\n",
            f'<script type="application/json" id="{STATE_ID}">{script_json(state)}</script>\n',
            f'<script type="application/json" id="{DATA_ID}">{script_json(data)}</script>\n',
            f'<script type="application/json" id="{GRAPHS_ID}">'
            f"{script_json(_graphs(run))}</script>\n",
            f'<script type="application/json" id="{BUNDLE_ID}">'
            f"{script_json(_static('run_widget.js'))}</script>\n",
            f'<script type="module">\n{_script_text(_static("run_standalone.js"))}\n</script>\n',
            "</body>\n</html>\n",
        ]
    )


def save_run_html(run: RunLike, path: str | os.PathLike[str], **kwargs: Any) -> Path:
    """Write ``run_html(run)`` to ``path`` (whole or not at all); returns it as a Path."""
    target = Path(path)
    if target.suffix.lower() not in (".html", ".htm"):
        raise ValueError(
            f"the run explorer is saved as an HTML page: name it *.html, not {target.name!r}"
        )
    if not target.parent.is_dir():
        raise FileNotFoundError(
            f"cannot save {target.name!r}: there is no directory {str(target.parent)!r} "
            "(create it first)"
        )
    _write_atomically(target, run_html(run, **kwargs).encode("utf-8"))
    return target
