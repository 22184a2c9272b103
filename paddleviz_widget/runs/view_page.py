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

from ..export.save import _write_atomically, check_place
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
from .ranks import RankedRun
from .view_data import RunLike, run_buffers, run_description, summary_matrix
from .view_ranks import missing_grad_diff, opening, ranks_description

#: Element ids js/run_standalone.ts reads (PAGE_IDS there), beside standalone.py's.
DATA_ID = "pvw-run-data"
GRAPHS_ID = "pvw-run-graphs"
#: A multi-rank page holds every rank: refused above this many bytes of data (before gzip).
PAGE_LIMIT = 400_000_000


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


def _run_data(run: RunLike) -> dict[str, Any]:
    buffers = run_buffers(run)
    summaries = summary_matrix(run)
    # float32 halves the page; float64 only when a NaN/Inf count is past float32's exact
    # integers (js/run_standalone.ts reads "summary_width")
    width = summaries.dtype.itemsize
    data: dict[str, Any] = {
        "steps": _packed(buffers["steps"]),
        "loss": _packed(buffers["loss"]),
        "norms": _packed(buffers["norms"]),
        "bad": _packed(buffers["bad"]),
        "summaries": _packed(summaries.astype(f"<f{width}").tobytes()),
    }
    if width == 8:
        data["summary_width"] = 8
    return data


def run_html(run: RunLike | RankedRun, *, title: str | None = None, height: str = "100vh") -> str:
    """The text of one HTML file showing run log ``run`` (the reader's RunLog, or a multi-rank
    run: every rank's log, the cross-rank report and its graph differences) in the run
    explorer: offline, from ``file://``, with no kernel. A snapshot: a run still being written
    shows the steps it had when the page was made."""
    if isinstance(run, RankedRun):
        return _ranked_html(run, title=title, height=height)
    data: dict[str, Any] = _run_data(run)
    description = run_description(run)
    state = {"run": description, "height": height, "step": -1, "layer": ""}
    return _page(run, state, data, _graphs(run), title)


def _ranked_html(ranked: RankedRun, *, title: str | None, height: str) -> str:
    """Every rank's data by rank (``per_rank``), graphs by rank, graph differences by finding;
    run_standalone.ts swaps the shown rank's in on a rank change, as the kernel does."""
    cells = sum(
        len(ranked.steps_of(r)["step"]) * (len(ranked.layers) * 5 + len(ranked.params) * 16)
        for r in ranked.ranks
    )
    if cells > PAGE_LIMIT:
        raise ValueError(
            f"{ranked.path}: {len(ranked.ranks)} ranks of {len(ranked.params)} parameters are "
            f"~{cells / 1e6:.0f} MB of data, too much for one page (at most "
            f"{PAGE_LIMIT / 1e6:.0f} MB): explore it in a notebook with GraphWidget.from_run"
        )
    shown, step = opening(ranked)
    per_rank = {}
    graphs = {}
    for r in ranked.ranks:
        log = ranked.rank(r)
        per_rank[str(r)] = {**_run_data(log), "run": run_description(log)}
        graphs[str(r)] = _graphs(log)
    data: dict[str, Any] = {"per_rank": per_rank, "diffs": _diffs(ranked)}
    state = {
        "run": per_rank[str(shown)]["run"], "height": height, "step": step, "layer": "",
        "rank": shown, "_ranks": ranks_description(ranked, shown), "_rank_step": -1,
    }  # fmt: skip
    name = f"Run {Path(str(ranked.path)).name} ({len(ranked.ranks)} ranks, paddleviz_widget)"
    return _page(ranked.rank(shown), state, data, graphs, title or name)


def _diffs(ranked: RankedRun) -> dict[str, Any]:
    from ..export.layer_rows import layer_rows

    out: dict[str, Any] = {}
    for k, finding in enumerate(ranked.report()):
        if finding.kind != "missing_grad":
            continue
        try:
            doc, words = missing_grad_diff(ranked, finding)
            out[str(k)] = {"graph": doc, "layer_rows": layer_rows(doc), "title": words}
        except Exception as exc:  # noqa: BLE001 - said on the page instead
            out[str(k)] = {"error": f"no graph difference: {exc}"}
    return out


def _page(
    run: RunLike, state: dict[str, Any], data: dict[str, Any], graphs: dict[str, Any],
    title: str | None,
) -> str:  # fmt: skip
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
            f'<script type="application/json" id="{GRAPHS_ID}">{script_json(graphs)}</script>\n',
            f'<script type="application/json" id="{BUNDLE_ID}">'
            f"{script_json(_static('run_widget.js'))}</script>\n",
            f'<script type="module">\n{_script_text(_static("run_standalone.js"))}\n</script>\n',
            "</body>\n</html>\n",
        ]
    )


def check_run_page(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path (``~``: the home directory), or a clear error if the page cannot be
    written there: said before the run is read (a big log takes a while)."""
    target = Path(path).expanduser()
    if target.suffix.lower() not in (".html", ".htm"):
        raise ValueError(
            f"the run explorer is saved as an HTML page: name it *.html, not {target.name!r}"
        )
    check_place(target)
    return target


def save_run_html(run: RunLike | RankedRun, path: str | os.PathLike[str], **kwargs: Any) -> Path:
    """Write ``run_html(run)`` to ``path`` (whole or not at all); returns it as a Path."""
    target = check_run_page(path)
    _write_atomically(target, run_html(run, **kwargs).encode("utf-8"))
    return target
