"""What a saved notebook shows of a GraphWidget where no widget runs (nbconvert, GitHub,
nbviewer, JavaScript off): an SVG of the view the explorer draws first, made in the kernel
when the widget is displayed, as the output's ``text/html``; and a ``text/plain`` that says
what the graph holds. Front ends that run widgets show the widget and ignore both; there the
picture is made after the widget is shown (late_picture.py)."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ..export.errors import StaticPictureUnavailable
from ..export.picture import render_picture
from ..export.view_rules import StaticView, static_view_of_json, svg_problem

CAPTION = "Static picture of the default view \u2014 run the notebook to explore"
#: Views with more visible nodes get no picture: it would weigh on the saved notebook (the
#: SVG is ~1.3 kB per node: 1 MB at 790 nodes; 2.4 MB and 1 s of ``dot`` at 2,000) and not be
#: readable at a notebook's width.
MAX_NODES = 600
#: Longest the layout of the saved picture may take.
LAYOUT_TIMEOUT_S = 10.0

_BEFORE_SVG = re.compile(r"^.*?(?=<svg[\s>])", re.S)
_TITLE = re.compile(r"<title>[^<]*</title>\n?")
_ID = re.compile(r' id="([^"]*)"')
_SVG_TAG = re.compile(r"<svg\b([^>]*)>")


def _inline_svg(svg: str, prefix: str) -> str:
    """Graphviz's SVG as an element of a page: no XML prologue, no titles (node names mean
    nothing to a reader), ids prefixed so that two pictures on one page never share one, and
    scaled down to the output's width."""
    body = _TITLE.sub("", _BEFORE_SVG.sub("", svg, count=1))
    body = _ID.sub(lambda m: f' id="{prefix}{m.group(1)}"', body)
    return _SVG_TAG.sub(
        lambda m: f'<svg{m.group(1)} style="max-width:100%;height:auto">', body, count=1
    )


def _html_block(svg: str | None, lines: list[str]) -> str:
    caption = "".join(
        f'<div style="margin-top:4px;color:#57606a;font:12px sans-serif">{html.escape(t)}</div>'
        for t in lines
    )
    picture = f'<div style="overflow:auto">{svg}</div>' if svg is not None else ""
    return f'<div class="pvw-static">{picture}{caption}</div>'


def _graph_counts(graph: Mapping[str, Any]) -> str:
    def count(key: str) -> int:
        value = graph.get(key)
        return len(value) if isinstance(value, list) else 0

    return (
        f"{count('nodes'):,} GradNodes \u00b7 {count('edges'):,} edges \u00b7 "
        f"{count('groups'):,} layer groups"
    )


def counts_text(graph: Mapping[str, Any]) -> str:
    """The ``text/plain`` of an output whose picture comes later (late_picture.py): what the
    graph holds, read without the view rules."""
    try:
        return f"GraphWidget: {_graph_counts(graph)}"
    except Exception:  # noqa: BLE001 - a display must never fail
        return "GraphWidget: a backward graph"


def closed_text(graph: Mapping[str, Any]) -> str:
    """What a closed widget shows when displayed (``w.close()`` took its comm, so no view)."""
    return (
        f"{counts_text(graph)} (closed: w.close() was called, so it has no view any more; "
        "GraphWidget.from_graph(w.graph) shows the graph again)"
    )


def view_now(
    *,
    fold: bool,
    view: str,
    answered: bool,
    drawn: Mapping[str, Any],
    expanded: list[str],
    request: Mapping[str, Any],
) -> dict[str, Any]:
    """The view the page shows, or will once it has applied the kernel's request (``answered``:
    it has): its groups, folding and reading, and once drawn, how (``drawn``: the widget's
    ``_view_options``, direction, labels, colours). Read by the static picture and ``save``."""
    wanted: dict[str, Any] = {
        "fold": fold is not False,
        "view": "forward" if view == "forward" else "backward",
    }
    if answered:
        keys = ("rankdir", "edgeLabels", "gradColour", "step")
        return {**wanted, **{k: drawn[k] for k in keys if k in drawn}, "expanded": list(expanded)}
    edits = list(request.get("edits", []))
    return {**wanted, "depth": request.get("depth", -1), "edits": edits}


def static_output(
    graph: Mapping[str, Any], graph_json: Callable[[], str], wanted: Callable[[], dict[str, Any]]
) -> tuple[str, str]:
    """(text/plain, text/html) of a widget output showing ``graph`` (``graph_json``: its JSON
    text) in the view ``wanted`` (``view_now``); never raises: a failure is a one-line reason."""
    try:
        view = static_view_of_json(graph_json(), {"static": True, **wanted()})
        lines = [CAPTION, *view.notes]
        svg = _static_svg(view)
        return f"GraphWidget: {view.counts}", _html_block(svg, lines)
    except Exception as err:  # noqa: BLE001 - a display must never fail
        reason = err.reason if isinstance(err, StaticPictureUnavailable) else repr(err)
        try:
            counts = _graph_counts(graph)
        except Exception:  # noqa: BLE001
            counts = "a backward graph"
        line = f"No static picture of this graph ({reason}): run the notebook to explore."
        return f"GraphWidget: {counts}. {line}", _html_block(None, [line])


def _static_svg(view: StaticView) -> str:
    if len(view.visible) > MAX_NODES:
        raise StaticPictureUnavailable(
            f"its default view has {len(view.visible):,} nodes, over the {MAX_NODES} a "
            "saved picture draws; paddleviz_widget.export.render_picture(view_dot(graph, "
            "depth=...), 'svg') makes a smaller or bigger one"
        )
    svg = render_picture(view.dot, "svg", timeout=LAYOUT_TIMEOUT_S).decode("utf-8")
    problem = svg_problem(svg)
    if problem is not None:
        raise StaticPictureUnavailable(f"Graphviz's SVG holds markup it should not: {problem}")
    return _inline_svg(svg, f"pvws{uuid.uuid4().hex[:8]}-")
