"""``standalone_html(payload)``: the explorer as one self-contained HTML file.

The page runs the widget's own front end (``static/widget.js``, with the Graphviz WASM and the
layout worker inside it, and ``widget.css``) on a stand-in for the Jupyter model, booted by
``static/standalone.js`` (built from ``js/standalone.ts``). Everything is inlined: the file opens
from ``file://`` with the network off and no kernel.

What is written into the page is never markup: the bundle, the graph document and the view's
initial state sit in ``<script type="application/json">`` elements as JSON whose ``<``, ``>``
and ``&`` are ``\\u`` escapes (so no name can close the element or open a comment), and the
title is HTML-escaped.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import Any

from .bundle import bundle_text

# Element ids js/standalone.ts reads (PAGE_IDS there).
HOST_ID = "pvw-host"
BUNDLE_ID = "pvw-bundle"
GRAPH_ID = "pvw-graph-json"
STATE_ID = "pvw-state"

DEFAULT_TITLE = "Backward graph (paddleviz_widget)"

# What would let a JSON text end its <script> element or start an HTML comment inside it: as
# \u escapes, JSON.parse reads the same text.
_UNSAFE_TABLE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

PAGE_CSS = """html, body { height: 100%; margin: 0; }
#pvw-host { height: 100%; }"""


def _static(name: str) -> str:
    return bundle_text(name)


def script_json(value: Any) -> str:
    """``value`` as JSON text that is safe inside a ``<script type="application/json">``
    element: JSON.parse reads back exactly ``value``."""
    try:
        # ASCII: a lone surrogate (a str Python holds but UTF-8 cannot) stays a \u escape.
        text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:  # NaN or Infinity: no JSON reader would take the page's data
        raise ValueError(
            f"the graph document holds a value JSON cannot carry ({exc}); pass the document "
            "build_graph returns, unchanged"
        ) from exc
    return text.translate(_UNSAFE_TABLE)


def _initial_state(
    expanded: list[str] | None, depth: int, height: str, selected: str
) -> dict[str, Any]:
    # The request a new GraphWidget makes of the browser (widget/view_requests.py):
    # open the groups to `depth` (-1: the browser's automatic depth), then show exactly `expanded`.
    edits = [] if expanded is None else [["set", list(expanded)]]
    return {
        "height": height,
        "selected": selected,
        "depth": depth,
        "expanded": list(expanded or []),
        "_request": {"id": 1, "depth": depth, "edits": edits},
        "_resolved": [],
    }


def _layer_rows(payload: Mapping[str, Any]) -> dict[str, Any]:
    from .layer_rows import LAYER_ROWS, layer_rows

    try:
        return layer_rows(payload)
    except ValueError as error:  # a document the graph model cannot read: the tab says why
        return {"type": LAYER_ROWS, "error": f"no layer table: {error}"}


def _check(payload: Any, expanded: Any, depth: Any, height: Any, selected: Any, title: Any) -> None:
    if not isinstance(payload, Mapping):
        raise TypeError(
            "standalone_html takes the graph document build_graph returns (a dict, e.g. "
            f"w.graph), got a {type(payload).__name__}"
        )
    if expanded is not None and (
        isinstance(expanded, str) or not all(isinstance(g, str) for g in expanded)
    ):
        raise TypeError(f"expanded must be a list of layer-group ids (str), got {expanded!r}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < -1:
        raise ValueError(f"depth must be an int >= 0, or -1 for automatic; got {depth!r}")
    for name, value in (("height", height), ("selected", selected)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {type(title).__name__}")


def standalone_html(
    payload: Mapping[str, Any],
    *,
    title: str | None = None,
    expanded: list[str] | None = None,
    depth: int = -1,
    height: str = "100vh",
    selected: str = "",
    view: str = "backward",
    fold: bool = True,
) -> str:
    """The explorer of graph document ``payload`` (what build_graph returns) as the text of one
    HTML file that works offline, from ``file://``, with no kernel.

    ``expanded``: the layer groups open at first (None: those ``depth`` opens); ``depth``: open
    the groups to this level (-1: the explorer's automatic depth); ``height``: the explorer's
    CSS height (the whole window by default); ``selected``: the id shown in the inspector;
    ``view``: the reading, "backward" or "forward"; ``fold``: repeated blocks folded (as
    GraphWidget's traits of those names).
    """
    _check(payload, expanded, depth, height, selected, title)
    if view not in ("backward", "forward"):
        raise ValueError(f'view must be "backward" or "forward", got {view!r}')
    if not isinstance(fold, bool):
        raise TypeError(f"fold must be a bool, got {type(fold).__name__}")
    # The reading and folding are the page model's traits: without them a widget read forward
    # (or unfolded) saved a page that opened backward (and folded).
    state = {**_initial_state(expanded, depth, height, selected), "view": view, "fold": fold}
    state["_layer_rows"] = _layer_rows(payload)  # the Layers tab: no kernel to ask here
    return "".join(
        [
            '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{_title_text(DEFAULT_TITLE if title is None else title)}</title>\n",
            f"<style>\n{PAGE_CSS}\n{_static('widget.css')}\n</style>\n</head>\n<body>\n",
            f'<div id="{HOST_ID}"></div>\n',
            "<noscript>This page draws a backward graph with JavaScript: allow it to run."
            "</noscript>\n",
            f'<script type="application/json" id="{STATE_ID}">{script_json(state)}</script>\n',
            f'<script type="application/json" id="{GRAPH_ID}">{script_json(payload)}</script>\n',
            f'<script type="application/json" id="{BUNDLE_ID}">'
            f"{script_json(_static('widget.js'))}</script>\n",
            f'<script type="module">\n{_script_text(_static("standalone.js"))}\n</script>\n',
            "</body>\n</html>\n",
        ]
    )


def _title_text(title: str) -> str:
    # A lone surrogate cannot be written as UTF-8: shown as U+FFFD, as the labels show it.
    return html.escape(_LONE_SURROGATE.sub("\ufffd", title))


def _script_text(js: str) -> str:
    """Our own boot code, inlined as is: it must not hold what would end its element early."""
    lowered = js.lower()
    if "</script" in lowered or "<!--" in lowered:
        raise RuntimeError(
            "static/standalone.js holds '</script' or '<!--', which would break the saved page; "
            "rewrite js/standalone.ts without them and run 'npm run build'"
        )
    return js
