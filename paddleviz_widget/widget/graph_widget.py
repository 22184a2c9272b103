"""GraphWidget: the anywidget that shows a backward graph in Jupyter. Its whole Python API is
this class: the synced traits, the constructors, the view methods and the reports, each method
a few lines that hand the graph document to a plain function in a sibling module (DEVELOP.md
says why this shape)."""

from __future__ import annotations

import contextlib
import os
import pathlib
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from ..export.bundle import bundle_source, widget_asset, widget_esm
from ..export.layer_rows import answer as layer_rows_answer
from ..gc_pause import gc_paused
from ..graph.diff import DEFAULT_RTOL
from ..graph.model import Graph
from ..graph.problems import Problem
from ..graph.summary import Summary
from ..tracer import build_graph
from .diff import diff_document
from .documents import saved_document
from .late_picture import PAINTED
from .layer_groups import LayerGroups, has_id
from .options import check_keywords, checked_depth, css_height
from .own_layout import ClosesOwnLayout
from .picks import picked
from .reports import problems, summary
from .resend import is_resend, resend_state
from .saving import save_view
from .showing import ShownGraph
from .static_picture import view_now
from .view_requests import answered, new_request, with_edits
from .wire import graph_from_json, graph_to_json, resume_after_cell

if TYPE_CHECKING:
    from ..runs.view_widget import RunWidget

#: The readings the page can draw (js/view/forward.ts holds what each one means).
VIEWS = ("backward", "forward")
#: The constructors' keyword options a user reads of (README "In the notebook").
OPTIONS = ("height", "depth", "fold", "view", "selected")


class ViewError(traitlets.TraitError, ValueError):
    """A ``view`` that is not one of VIEWS (a TraitError, so traitlets undoes the change)."""


class PickError(traitlets.TraitError, ValueError):
    """A ``selected``, ``expanded`` or ``depth`` the graph cannot take (traitlets keeps the old)."""


class GraphWidget(ShownGraph, ClosesOwnLayout, anywidget.AnyWidget):
    """Interactive view of the backward graph of ``y``.

    ``y`` is a paddle.Tensor, or a list/tuple/dict of them. The graph is built once, in the
    constructor, into plain JSON: the widget holds no reference to tensors or GradNodes.
    ``GraphWidget.from_graph(doc_or_path)`` shows a graph document (or a saved ``.json``).

    ``depth`` opens the layer groups down to that level (0: all collapsed); by default the
    deepest level that keeps the picture readable (about 150 visible nodes). The traits
    ``selected``, ``expanded``, ``depth`` and ``view`` (``GraphWidget(y, view="forward")``: the
    graph read forward) follow the browser and can be set from Python; the browser works out
    which groups a depth opens and fills ``expanded`` in.
    """

    _esm = widget_esm("widget.js")
    _bundle = traitlets.Unicode(bundle_source("widget.js")).tag(sync=True)
    _css = widget_asset("widget.css")

    # -- the synced model (the page's side: js/kernel_sync.ts); who writes each key ------------
    #: The graph document (kernel; sent as one buffer of JSON text: wire.py).
    graph = traitlets.Dict().tag(sync=True, to_json=graph_to_json, from_json=graph_from_json)
    #: CSS height of the widget (kernel).
    height = traitlets.Unicode("600px").tag(sync=True)
    #: Id of the selected node, edge or layer group ("" for none). Both sides.
    selected = traitlets.Unicode("").tag(sync=True)
    #: Ids of the expanded (open) layer groups. Both sides (the kernel's value is a guess
    #: until the browser answers its request).
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: Depth the layer groups were last opened to (-1: pick automatically). Both sides.
    depth = traitlets.Int(-1).tag(sync=True)
    #: Fold each run of repeated blocks (consecutive sibling layers of one structure, named
    #: "layers.0", "layers.1", ...) into one node, which a click unfolds; depths and
    #: expand_all leave it folded, expand("layers.3") opens that block. False: every block.
    #: Kernel.
    fold = traitlets.Bool(True).tag(sync=True)
    #: How the graph is read: "backward" (GradNodes, as recorded) or "forward" (the ops they
    #: differentiate, arrows from inputs to outputs). Both sides: follows the toolbar's toggle.
    view = traitlets.Unicode("backward").tag(sync=True)
    #: The kernel's view request, written by the kernel only: {"id", "depth", "edits"}.
    _request = traitlets.Dict().tag(sync=True)
    #: [request id, edits applied]: how far the browser got, written by the browser only.
    _resolved: traitlets.List[Any] = traitlets.List().tag(sync=True)
    #: How the page draws the view, written by the browser only (js/view_options.ts) once a
    #: view draws and whenever the user changes it: {"rankdir": "TB"|"LR", "edgeLabels",
    #: "gradColour": bool, "step": position in meta.steps.index or None}; {} until then.
    _view_options = traitlets.Dict().tag(sync=True)

    _auto = True  # the depth is the browser's automatic one
    _quiet = False  # the kernel is writing its own request: its observers stay out
    _groups_read: tuple[Any, LayerGroups] | None = None  # (the graph, its groups) once asked

    # -- constructors ------------------------------------------------------------------------

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
        # The comm opens first, empty: the page loads its front end while this builds (round 3).
        self._start({}, height, depth, kwargs)
        with gc_paused() as pause:  # no pass over the user's heap until the graph is sent
            try:
                doc = build_graph(y, model=model, params=params)
            except BaseException:
                self.close()  # and its own Layout (own_layout.py)
                raise
            self.graph = doc
            pause.resume_with(resume_after_cell(self))  # in a kernel: after the cell (wire.py)

    @classmethod
    def from_graph(
        cls,
        doc_or_path: Mapping[str, Any] | str | os.PathLike[str] | Graph,
        *,
        height: str | int = "600px",
        depth: int | None = None,
        **kwargs: Any,
    ) -> GraphWidget:
        """The widget of a graph document: a dict as ``build_graph`` returns it (schema 2.x, or
        a saved 1.0 one), the path of a ``.json`` file holding one (``w.save("g.json")``,
        ``python -m paddleviz_widget -o g.json``), or a ``paddleviz_widget.graph.Graph``.
        ``height``, ``depth`` and the traits (``fold=False``, ``view="forward"``, ...) as for
        ``GraphWidget(y)``. A document the page cannot read draws nothing, and the status line
        says why."""
        widget = cls.__new__(cls)  # skips __init__, which would trace a tensor
        with gc_paused() as pause:  # as in __init__: no collection until the graph is sent
            widget._start(saved_document(doc_or_path), height, depth, kwargs)
            pause.resume_with(resume_after_cell(widget))
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
        from ..sources.paddle_dump_dir import build_graph_from_dump

        doc = build_graph_from_dump(path, which=which)
        return cls.from_graph(doc, height=height, depth=depth, **kwargs)

    @classmethod
    def from_jittor(
        cls, data: Any, *, height: str | int = "600px", depth: int | None = None, **kwargs: Any
    ) -> GraphWidget:
        """The graph of Jittor trace data: the dict ``jt.dump_trace_data()`` returns (the data
        JittorVis serves), or the path of a .pkl holding it. Unpickling runs whatever code the
        file names: only pass .pkl files you made or trust."""
        from ..sources.jittor import build_graph_from_jittor

        doc = build_graph_from_jittor(data)
        return cls.from_graph(doc, height=height, depth=depth, **kwargs)

    @classmethod
    def diff(
        cls,
        a: Any,
        b: Any,
        *,
        rtol: float = DEFAULT_RTOL,
        labels: Sequence[str] = ("a", "b"),
        stats: bool = True,
        height: str | int = "600px",
        depth: int | None = None,
        **kwargs: Any,
    ) -> GraphWidget:
        """One graph showing how ``b`` differs from ``a``: nodes and edges only in b (added,
        green), only in a (removed, red dashed) and in both but not the same (changed, amber:
        dtype, shape, slot, or a gradient norm or max |g| that moved by more than ``rtol``
        relative to the larger, or a NaN/Inf count). ``a`` and ``b`` are tensors (or lists /
        dicts of them), graph documents as ``build_graph`` returns them, or paths of .json
        files holding one. Nodes are matched by parameter name, else by layer path, op name and
        position, never by pointer. ``stats=False`` compares structure alone (two ranks, whose
        batches make every statistic differ). ``summary()`` on the result lists them."""
        doc = diff_document(a, b, rtol=rtol, labels=labels, stats=stats)
        return cls.from_graph(doc, height=height, depth=depth, **kwargs)

    @classmethod
    def from_run(
        cls, path: str | os.PathLike[str] | Any, *, height: str | int = "720px", **kwargs: Any
    ) -> RunWidget:
        """The run explorer of a run log (the ``run_dir`` of ``trace(model, stats=True,
        every=N, run_dir=...)``, or an ``open_run`` result): a layer x step heatmap of gradient
        norms, the loss curve and a step picker; a fully captured step shows its graph here.
        A run still being written refreshes. See runs/view_widget.py's RunWidget."""
        from ..runs.view_widget import RunWidget

        return RunWidget(path, height=height, **kwargs)

    def _start(
        self, doc: Mapping[str, Any], height: str | int, depth: int | None, kwargs: Any
    ) -> None:
        what = type(self).__name__
        height = css_height(height, what=what)
        depth = checked_depth(depth, what=what)
        # the graph is the constructor's own: the rest are the traits a user may set
        check_keywords(kwargs, set(self.trait_names()) - {"graph"}, OPTIONS, what=what)
        self._auto = depth is None
        self._painted = threading.Event()
        super().__init__(graph=doc, height=height, depth=-1 if depth is None else depth, **kwargs)
        self.on_msg(self._on_msg)

    # -- the view: layer groups opened and closed from Python ------------------------------

    def expand(self, name: str) -> None:
        """Open layer group ``name`` (a group id or a layer path like "conv.0") and those
        around it. Raises ValueError, listing close matches, if there is no such group."""
        ids = self._groups.resolve(name)
        around = [a for g in ids for a in self._groups.ancestors(g)]
        self._edit([["open", g] for g in ids], [*self.expanded, *ids, *around])

    def collapse(self, name: str) -> None:
        """Close layer group ``name`` (a group id or a layer path like "conv.0")."""
        ids = set(self._groups.resolve(name))
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

    # -- words, tables and files -------------------------------------------------------------

    def problems(self) -> list[Problem]:
        """What looks wrong in the gradients, in words, each naming the layer path, the
        parameter or GradNode and the call site: where the first NaN/Inf was made (forward
        layer or backward GradNode), exploding and vanishing gradients, where all-zero
        gradients start, parameters no gradient reaches; frozen parameters as information,
        after the problems. Rules: graph/problems/. Needs ``trace(model, stats=True)``."""
        return problems(self.graph)

    def summary(self) -> Summary | dict[str, Any]:
        """The per-layer table (type, parameters, GradNodes, gradient shapes in and out).
        Parameters without a node count too where the document names them (frozen, unused,
        recomputed: ``trace(model, stats=True)``); else the footer says what is left out.
        On a diff (``GraphWidget.diff``): a dict with the labels, ``rtol``, the counts and
        lists ``added``, ``removed`` and ``changed``, each entry naming the node or edge, its
        layer path, op and what changed (``a`` and ``b`` values)."""
        return summary(self.graph)

    def save(self, path: str | os.PathLike[str]) -> pathlib.Path:
        """Save the graph and the view now shown to ``path``; returns it as a Path. The
        suffix picks what is written:

        - ``.json``: the graph document, exactly what ``build_graph`` returns (whatever the view);
        - ``.dot``: the Graphviz source of this view (its open layer groups, folded blocks,
          reading, direction, edge labels, gradient colours and statistics step);
        - ``.svg`` / ``.png``: the picture of this view, laid out by Graphviz's ``dot`` (the
          PNG at 2x, 192 dpi, as the page's PNG button);
        - ``.html``: the explorer as one self-contained file (works offline, no kernel), opening
          on this view's open layer groups, reading and folding.

        The file appears whole or not at all. Before the widget is shown, the view is the one
        the page will open on. Raises ValueError for any other suffix, and
        ``StaticPictureUnavailable`` (saying why) when a picture cannot be made here.
        """
        return save_view(self.graph, path, self._view_now())

    def _view_now(self) -> dict[str, Any]:
        return view_now(
            fold=self.fold,
            view=self.view,
            answered=self._answered(),
            drawn=self._view_options,
            expanded=self.expanded,
            request=self._request,
        )

    def _on_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        if is_resend(content):  # the page missed what was sent (resend.py)
            return resend_state(self)
        if isinstance(content, Mapping) and content.get("type") == PAINTED:
            self._painted.set()  # the late picture's cue (late_picture.py)
            return
        reply = layer_rows_answer(content, self.graph)  # the Layers tab's only message
        if reply is not None:
            self.send(reply)

    # -- the sync protocol's kernel side (view_requests.py says how it goes) --------------------

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
        held = change["name"] in ("graph", "depth", "expanded")
        with self.hold_sync() if held else contextlib.nullcontext():
            super().notify_change(change)

    def _answered(self) -> bool:  # the browser applied the whole request (not before a view)
        return answered(self._request, self._resolved)

    @property
    def _groups(self) -> LayerGroups:  # read when a method names a group, not before the send
        if self._groups_read is None or self._groups_read[0] is not self.graph:
            self._groups_read = (self.graph, LayerGroups(self.graph))
        return self._groups_read[1]

    @traitlets.validate("selected", "expanded", "depth")
    def _check_pick(self, proposal: Mapping[str, Any]) -> Any:
        # Set in Python: what the graph has, said if not (a layer path in `expanded`, "conv",
        # opened nothing and stayed there, a wrong `selected` selected nothing). The page's
        # and the kernel's own values, and those before the graph, are not checked.
        name, value = proposal["trait"].name, proposal["value"]
        if self._quiet or self._from_browser(name) or not self.graph:
            return value
        try:
            return picked(self.graph, self._groups, name, value)
        except ValueError as error:
            raise PickError(str(error)) from None

    @traitlets.observe("graph")
    def _on_graph(self, change: Mapping[str, Any]) -> None:
        if self.selected and "-" not in self.selected and not has_id(self.graph, self.selected):
            self.selected = ""
        if not self._from_browser("graph"):
            self._ask(-1 if self._auto else self.depth)

    @traitlets.observe("depth")
    def _on_depth(self, change: Mapping[str, Any]) -> None:
        if self._quiet or self._from_browser("depth"):
            return
        self._auto = change["new"] < 0
        self._ask(change["new"])

    @traitlets.observe("expanded")
    def _on_expanded(self, change: Mapping[str, Any]) -> None:
        # Set by hand in Python: that is the state to show, after whatever came before.
        if not self._quiet and not self._from_browser("expanded"):
            self._edit([["set", list(change["new"])]], change["new"])

    def _ask(self, depth: int, *, expanded: list[str] | None = None) -> None:
        """A new request: open the groups to ``depth`` (-1: the browser's automatic depth)."""
        self._quiet = True
        try:
            with self.hold_sync():
                self.depth = depth
                if expanded is not None:
                    self.expanded = expanded
                self._request = new_request(self._request, depth)
        finally:
            self._quiet = False

    def _edit(self, edits: list[list[Any]], expanded: Iterable[str]) -> None:
        """``edits`` for the browser, and what ``expanded`` becomes meanwhile."""
        wanted = set(expanded)
        self._quiet = True
        try:
            with self.hold_sync():
                self.expanded = [gid for gid in self._groups.ids if gid in wanted]
                self._request = with_edits(self._request, edits)
        finally:
            self._quiet = False
