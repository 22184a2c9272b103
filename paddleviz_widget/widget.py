"""GraphWidget: the anywidget that shows a backward graph in Jupyter."""

from __future__ import annotations

import difflib
import json
import os
import pathlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from .tracer import build_graph
from .widget_diff import GraphDiff
from .widget_export import GraphExport
from .widget_layers import LayerRows
from .widget_reports import GraphReports
from .widget_static import StaticFallback

if TYPE_CHECKING:
    from .runs.view_widget import RunWidget

_STATIC = pathlib.Path(__file__).parent / "static"


def _bundle(name: str) -> pathlib.Path:
    path = _STATIC / name
    if not path.exists():
        raise RuntimeError(
            f"paddleviz_widget's front-end bundle ({path}) is missing. Install the package with "
            "'pip install .' (which builds it), or run 'npm ci && npm run build' in the source "
            "tree."
        )
    return path


def _graph_to_json(graph: Mapping[str, Any], widget: Any) -> memoryview:
    # One binary buffer of JSON text: ipywidgets would otherwise walk every node, edge and
    # list of the payload looking for buffers, and Jupyter would encode it as nested JSON
    # (~85 ms + ~50 ms per 10k GradNodes, in the kernel, before the browser gets anything).
    text = json.dumps(graph, separators=(",", ":"))
    widget._graph_text = (graph, text)  # read once by the static picture (widget_static.py)
    return memoryview(text.encode())


def _graph_from_json(value: Any, widget: Any) -> Any:
    return json.loads(bytes(value)) if isinstance(value, (bytes, memoryview)) else value


class _Groups:
    """Layer-group ids (payload order), names and parent links of one payload, read once in
    linear time: what expand/collapse need to name groups and open the ones around them."""

    def __init__(self, graph: Mapping[str, Any]) -> None:
        groups = [g for g in graph.get("groups") or [] if isinstance(g, Mapping)]
        self.names: dict[str, str] = {}
        for g in groups:
            self.names.setdefault(g["id"], g.get("name") or "")
        self.ids = list(self.names)
        self.by_name: dict[str, list[str]] = {}
        for gid, name in self.names.items():
            self.by_name.setdefault(name, []).append(gid)
        self.parent = {g["id"]: g.get("parent") for g in groups}

    def ancestors(self, gid: str) -> list[str]:
        """Groups enclosing group ``gid``, innermost first (a cycle in the links ends it)."""
        chain: list[str] = []
        cur = self.parent.get(gid)
        while cur in self.names and cur != gid and cur not in chain:
            chain.append(cur)
            cur = self.parent.get(cur)
        return chain


def _has_id(graph: Mapping[str, Any], wanted: str) -> bool:
    return any(
        x.get("id") == wanted
        for key in ("nodes", "edges", "groups")
        for x in graph.get(key) or []
        if isinstance(x, Mapping)
    )


#: The readings the page can draw (js/view/forward.ts holds what each one means).
VIEWS = ("backward", "forward")


class ViewError(traitlets.TraitError, ValueError):
    """A ``view`` that is not one of VIEWS (a TraitError, so traitlets undoes the change)."""


class GraphWidget(
    GraphDiff, GraphExport, GraphReports, LayerRows, StaticFallback, anywidget.AnyWidget
):
    """Interactive view of the backward graph of ``y``.

    ``y`` is a paddle.Tensor, or a list/tuple/dict of them. The graph is built once, in the
    constructor, into plain JSON: the widget holds no reference to tensors or GradNodes.

    ``depth`` opens the layer groups down to that level (0: all collapsed); by default the
    deepest level that keeps the picture readable (about 150 visible nodes). The traits
    ``selected``, ``expanded``, ``depth`` and ``view`` (``GraphWidget(y, view="forward")``: the
    graph read forward) follow the browser and can be set from Python; the browser works out
    which groups a depth opens and fills ``expanded`` in.
    """

    _esm = _bundle("widget.js")
    _css = _bundle("widget.css")

    graph = traitlets.Dict().tag(sync=True, to_json=_graph_to_json, from_json=_graph_from_json)
    height = traitlets.Unicode("600px").tag(sync=True)
    #: Id of the selected node, edge or layer group ("" for none).
    selected = traitlets.Unicode("").tag(sync=True)
    #: Ids of the expanded (open) layer groups.
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: Depth the layer groups were last opened to (-1: pick automatically).
    depth = traitlets.Int(-1).tag(sync=True)
    #: Fold each run of repeated blocks (consecutive sibling layers of one structure, named
    #: "layers.0", "layers.1", ...) into one node, which a click unfolds; depths and
    #: expand_all leave it folded, expand("layers.3") opens that block. False: every block.
    fold = traitlets.Bool(True).tag(sync=True)
    #: How the graph is read: "backward" (GradNodes, as recorded) or "forward" (the ops they
    #: differentiate, arrows from inputs to outputs). Follows the toolbar's toggle.
    view = traitlets.Unicode("backward").tag(sync=True)
    #: The kernel's view request, written by the kernel only: {"id", "depth", "edits"}.
    _request = traitlets.Dict().tag(sync=True)
    #: [request id, edits applied]: how far the browser got, written by the browser only.
    _resolved: traitlets.List[Any] = traitlets.List().tag(sync=True)
    #: How the page draws the view, written by the browser only (js/view_options.ts) once a
    #: view draws and whenever the user changes it: {"rankdir": "TB"|"LR", "edgeLabels",
    #: "gradColour": bool, "step": position in meta.steps.index or None}; {} until then.
    _view_options = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        y: Any,
        *,
        model: Any = None,
        params: Any = None,
        height: str | int = "600px",
        depth: int | None = None,
        **kwargs: Any,
    ) -> None:
        self._start(build_graph(y, model=model, params=params), height, depth, kwargs)

    def _start(
        self, payload: dict[str, Any], height: str | int, depth: int | None, kwargs: Any
    ) -> None:
        if isinstance(height, int):
            height = f"{height}px"
        if depth is not None and depth < 0:
            raise ValueError(f"depth must be >= 0 (or None for automatic), got {depth}")
        self._auto = depth is None
        super().__init__(
            graph=payload, height=height, depth=-1 if depth is None else depth, **kwargs
        )

    @classmethod
    def _of_payload(
        cls, payload: dict[str, Any], height: str | int, depth: int | None, kwargs: Any
    ) -> GraphWidget:
        widget = cls.__new__(cls)  # skips __init__, which would trace a tensor
        widget._start(payload, height, depth, kwargs)
        return widget

    @classmethod
    def from_dump(
        cls,
        path: str | os.PathLike[str],
        *,
        which: str | None = None,
        height: str | int = "600px",
        depth: int | None = None,
        **kwargs: Any,
    ) -> GraphWidget:
        """The graph in the files ``loss.backward(dump_backward_graph_path=DIR)`` wrote
        (Paddle >= 3.3), e.g. on another machine: ``path`` is DIR (its newest dump; the status
        line says so when there are several) or one dump's .dot; ``which`` picks a dump in DIR
        by its timestamp prefix. Layer groups and parameter names are not in a dump."""
        from .sources.paddle_dump_dir import build_graph_from_dump

        return cls._of_payload(build_graph_from_dump(path, which=which), height, depth, kwargs)

    @classmethod
    def from_jittor(
        cls, data: Any, *, height: str | int = "600px", depth: int | None = None, **kwargs: Any
    ) -> GraphWidget:
        """The graph of Jittor trace data: the dict ``jt.dump_trace_data()`` returns (the data
        JittorVis serves), or the path of a .pkl holding it. Unpickling runs whatever code the
        file names: only pass .pkl files you made or trust."""
        from .sources.jittor import build_graph_from_jittor

        return cls._of_payload(build_graph_from_jittor(data), height, depth, kwargs)

    @classmethod
    def from_run(
        cls, path: str | os.PathLike[str] | Any, *, height: str | int = "720px", **kwargs: Any
    ) -> RunWidget:
        """The run explorer of a run log (the ``run_dir`` of ``trace(model, stats=True,
        every=N, run_dir=...)``, or an ``open_run`` result): a layer x step heatmap of gradient
        norms, the loss curve and a step picker; a fully captured step shows its graph here.
        A run still being written refreshes. See runs/view_widget.py's RunWidget."""
        from .runs.view_widget import RunWidget

        return RunWidget(path, height=height, **kwargs)

    # -- view state ------------------------------------------------------------------------
    # The browser owns the view rules (group levels, a layer's separate calls, visible-node
    # counts, the automatic depth: js/view). The kernel asks, in `_request`: open the groups
    # to a depth (-1: automatic), then apply these edits in order (["open", id],
    # ["close", id], ["all"], ["set", ids]); each new depth starts a new request. The browser
    # applies what it has not yet, syncs `depth` and `expanded` back, and says how far it got
    # in `_resolved`. Each side writes only its own trait, so a late message from the other
    # never undoes it; `expanded` is set here too, as a guess to read until the answer.

    @traitlets.validate("view")
    def _check_view(self, proposal: Mapping[str, Any]) -> str:
        if proposal["value"] not in VIEWS:
            raise ViewError(f'view must be "backward" or "forward", got {proposal["value"]!r}')
        return str(proposal["value"])

    def _from_browser(self, name: str) -> bool:
        return name in self._property_lock

    def notify_change(self, change: Any) -> None:
        # One message for a change and what its observer adds (a new graph and its depth
        # request), so the browser never draws the change alone first.
        if change["name"] in ("graph", "depth", "expanded"):
            with self.hold_sync():
                super().notify_change(change)
        else:
            super().notify_change(change)

    def _answered(self) -> bool:
        """Whether the browser has applied the whole request (False until a view shows)."""
        request = self._request
        return self._resolved == [request.get("id"), len(request.get("edits", []))]

    @traitlets.observe("graph")
    def _on_graph(self, change: Mapping[str, Any]) -> None:
        self._groups = _Groups(self.graph)
        if self.selected and "-" not in self.selected and not _has_id(self.graph, self.selected):
            self.selected = ""
        if not self._from_browser("graph"):
            self._ask(-1 if getattr(self, "_auto", True) else self.depth)

    @traitlets.observe("depth")
    def _on_depth(self, change: Mapping[str, Any]) -> None:
        if getattr(self, "_quiet", False) or self._from_browser("depth"):
            return
        self._auto = change["new"] < 0
        self._ask(change["new"])

    @traitlets.observe("expanded")
    def _on_expanded(self, change: Mapping[str, Any]) -> None:
        # Set by hand in Python: that is the state to show, after whatever came before.
        if not getattr(self, "_quiet", False) and not self._from_browser("expanded"):
            self._edit([["set", list(change["new"])]], change["new"])

    def _ask(self, depth: int, *, expanded: list[str] | None = None) -> None:
        """A new request: open the groups to ``depth`` (-1: the browser's automatic depth)."""
        self._quiet = True
        try:
            with self.hold_sync():
                self.depth = depth
                if expanded is not None:
                    self.expanded = expanded
                number = int(self._request.get("id", 0)) + 1
                self._request = {"id": number, "depth": depth, "edits": []}
        finally:
            self._quiet = False

    def _edit(self, edits: list[list[Any]], expanded: Iterable[str]) -> None:
        """``edits`` for the browser, and what ``expanded`` becomes meanwhile."""
        wanted = set(expanded)
        self._quiet = True
        try:
            with self.hold_sync():
                self.expanded = [gid for gid in self._groups.ids if gid in wanted]
                request = self._request
                self._request = {**request, "edits": [*request.get("edits", []), *edits]}
        finally:
            self._quiet = False

    def _resolve(self, name: str) -> list[str]:
        """Group ids for a group id or a layer path such as "conv.0"."""
        groups = self._groups
        if name in groups.names:
            return [name]
        if name in groups.by_name:
            return groups.by_name[name]
        if not groups.ids:
            raise ValueError(f"no layer group {name!r}: this graph has no layer groups")
        candidates = sorted(set(groups.by_name) | set(groups.ids))
        close = difflib.get_close_matches(name, candidates, n=5, cutoff=0.4)
        hint = f"; close matches: {', '.join(map(repr, close))}" if close else ""
        shown = ", ".join(repr(groups.names[g] or g) for g in groups.ids[:8])
        raise ValueError(
            f"no layer group {name!r} in this graph{hint} (layer groups: {shown}"
            f"{', ...' if len(groups.ids) > 8 else ''})"
        )

    def expand(self, name: str) -> None:
        """Open layer group ``name`` (a group id or a layer path like "conv.0") and those
        around it. Raises ValueError, listing close matches, if there is no such group."""
        ids = self._resolve(name)
        around = [a for g in ids for a in self._groups.ancestors(g)]
        self._edit([["open", g] for g in ids], [*self.expanded, *ids, *around])

    def collapse(self, name: str) -> None:
        """Close layer group ``name`` (a group id or a layer path like "conv.0")."""
        ids = set(self._resolve(name))
        self._edit([["close", g] for g in ids], (g for g in self.expanded if g not in ids))

    def expand_all(self) -> None:
        """Open every layer group (``depth`` becomes the deepest level, once the browser
        has it). On a graph too big to lay out at once, the browser opens only what fits its
        visible-node budget (2,000), says so in its status line, and syncs that back into
        ``expanded``. The blocks of a folded run stay closed (see ``fold``)."""
        self._auto = False
        self._edit([["all"]], self._groups.ids)

    def collapse_all(self) -> None:
        """Close every layer group (``depth`` becomes 0; the browser keeps a group around
        the whole model open)."""
        self._auto = False
        self._ask(0, expanded=[])
