"""The explorer's view rules, run in the kernel: the DOT of the view the explorer draws first.

The rules exist once, in ``js/view``; ``js/static_view.ts`` bundles them (no DOM, no WASM) as
``static/view_rules.js``, which runs here in embedded V8 (mini-racer). One V8 context per
process, made on first use and shared under a lock.
"""

from __future__ import annotations

import atexit
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import GraphDocumentError
from .errors import StaticPictureUnavailable

BUNDLE = Path(__file__).resolve().parents[1] / "static" / "view_rules.js"
#: Longest the view rules may run on one graph (the 10k-GradNode Llama takes ~0.1 s).
TIMEOUT_S = 60.0

_lock = threading.Lock()
_engine: Any = None


@dataclass(frozen=True)
class StaticView:
    """One view as the explorer would draw it first."""

    dot: str
    #: Depth the open groups amount to (-1: not a depth preset).
    depth: int
    #: Open layer groups, payload order.
    expanded: list[str]
    #: Ids of the visible nodes (nodes and collapsed groups), as the explorer draws them.
    visible: list[str]
    #: The explorer's status-line counts ("... GradNodes · ... — showing ...").
    counts: str
    #: What cut the view down to the visible-node budget, if anything.
    notes: list[str]
    #: The tracer's notices (why annotations are missing, ...).
    notices: list[str]


def _new_engine() -> Any:
    try:
        from py_mini_racer import MiniRacer
    except ImportError as err:
        raise StaticPictureUnavailable(
            f"the mini-racer package is not installed ({err}): pip install 'mini-racer>=0.12'"
        ) from err
    if not BUNDLE.exists():
        raise StaticPictureUnavailable(
            f"the view-rules bundle ({BUNDLE}) is missing: run 'npm run build' in the source "
            "tree, or reinstall the package"
        )
    # Made on a thread with no asyncio loop, so that mini-racer runs V8 on a loop thread of its
    # own: on a Jupyter kernel's running loop it would refuse timeouts.
    made: dict[str, Any] = {}

    def make() -> None:
        try:
            engine = MiniRacer()
            engine.eval(BUNDLE.read_text(encoding="utf-8"), timeout_sec=TIMEOUT_S)
            made["engine"] = engine
        except Exception as err:  # reported below, on the caller's thread
            made["error"] = err

    thread = threading.Thread(target=make, name="paddleviz-view-rules", daemon=True)
    thread.start()
    thread.join()
    if "error" in made:
        raise StaticPictureUnavailable(f"the view rules did not start in V8: {made['error']}")
    # Closed while the interpreter is whole: left to the garbage collector at shutdown,
    # freeing the V8 context blocks for ever and the process never exits.
    atexit.register(_close_engine)
    return made["engine"]


def _close_engine() -> None:
    global _engine
    if not _lock.acquire(timeout=5):
        return
    try:
        if _engine is not None:
            _engine.close()
            _engine = None
    finally:
        _lock.release()


def _eval(script: str) -> str:
    """Run ``script`` (an expression giving a string) in the shared V8 context."""
    global _engine
    with _lock:
        if _engine is None:
            _engine = _new_engine()
        try:
            out = _engine.eval(script, timeout_sec=TIMEOUT_S)
        except Exception as err:
            if type(err).__name__ == "JSTimeoutException":
                raise StaticPictureUnavailable(
                    f"the view rules took over {TIMEOUT_S:g} s on this graph"
                ) from err
            first = (str(err).strip().splitlines() or [""])[0]
            raise StaticPictureUnavailable(
                f"the view rules failed in V8 ({type(err).__name__}: {first})"
            ) from err
    if not isinstance(out, str):
        raise StaticPictureUnavailable(f"the view rules gave {type(out).__name__}, not text")
    return out


def static_view_of_json(payload_json: str, options: Mapping[str, Any]) -> StaticView:
    """``static_view`` of a graph document given as JSON text, ``options`` in full (see
    js/static_view.ts): for a caller that has the text already (GraphWidget)."""
    options_json = json.dumps(options)
    r = json.loads(_eval(f"pvwStatic.view({json.dumps(payload_json)}, {json.dumps(options_json)})"))
    if "error" in r:
        if r.get("kind") == "option":
            raise ValueError(r["error"])
        raise StaticPictureUnavailable(r["error"])
    return StaticView(
        r["dot"], r["depth"], r["expanded"], r["visible"], r["counts"], r["notes"], r["notices"]
    )


def svg_problem(svg: str) -> str | None:
    """What in ``svg`` is not the plain drawing Graphviz makes of our DOT (markup, links,
    handlers), or None: the explorer's own check (js/render/svg_guard.ts)."""
    problem = json.loads(_eval(f"JSON.stringify(pvwStatic.svgProblem({json.dumps(svg)}))"))
    return problem if isinstance(problem, str) else None


def static_view(
    payload: Mapping[str, Any],
    *,
    expanded: list[str] | None = None,
    depth: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> StaticView:
    """The view the explorer draws first for ``payload`` (a ``build_graph`` document): layer
    groups opened to the automatic depth within the visible-node budget, or to ``depth``, or
    exactly the groups in ``expanded``. ``options``, as the GraphWidget traits of those names:
    ``fold`` (runs of repeated blocks folded, default True), ``view`` ("backward"/"forward"),
    ``rankdir`` ("TB"/"LR"), ``edgeLabels``, ``gradColour`` (default: on when the graph has
    statistics), ``step`` (a position in meta.steps.index; default the last); and ``static``
    (colours written into the DOT, default True here). Raises ValueError for options the graph
    cannot honour, StaticPictureUnavailable when the view rules cannot run."""
    if not isinstance(payload, Mapping) or "schema_version" not in payload:
        # the page reads {} as "no graph yet" and draws nothing: view_dot({}) or None gave an
        # empty digraph, and save_graph({}, "g.svg") an empty picture, without a word
        raise GraphDocumentError(
            "schema_version",
            f"view_dot/static_view take a graph document, got {_what(payload)}: pass "
            "build_graph(y), or a dict it returned (json.load of a saved .json)",
        )
    wanted: dict[str, Any] = {"static": True, **(options or {})}
    if expanded is not None:
        wanted["expanded"] = list(expanded)
    if depth is not None:
        wanted["depth"] = depth
    try:
        payload_json = json.dumps(payload, separators=(",", ":"))
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"payload is not a JSON graph document ({err}): pass build_graph(y)"
        ) from err
    return static_view_of_json(payload_json, wanted)


def _what(payload: Any) -> str:
    if hasattr(payload, "to_dict"):  # a Graph: its document is one call away
        return f"a {type(payload).__name__} (its .to_dict() is the document)"
    if isinstance(payload, Mapping):
        return "a dict with no schema_version" if payload else "an empty dict"
    return f"a {type(payload).__name__}"


def view_dot(
    payload: Mapping[str, Any],
    *,
    expanded: list[str] | None = None,
    depth: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> str:
    """DOT text of the view the explorer draws first (see ``static_view``), with the colours
    of the explorer's light theme written in, for Graphviz's ``dot``: ``render_picture``."""
    return static_view(payload, expanded=expanded, depth=depth, options=options).dot
