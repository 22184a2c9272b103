"""GraphWidget: the anywidget that shows a backward graph in Jupyter."""

from __future__ import annotations

import difflib
import os
import pathlib
from collections.abc import Iterable, Mapping
from typing import Any

import anywidget
import traitlets

from .tracer import build_graph

_STATIC = pathlib.Path(__file__).parent / "static"

# The default view opens layer groups level by level while at most this many nodes show.
# js/view/expansion.ts implements the same rule (the browser uses it for payloads it is
# handed without a resolved depth); both are tested against tests/fixtures/graphs.
DEFAULT_NODE_BUDGET = 150


def _bundle(name: str) -> pathlib.Path:
    path = _STATIC / name
    if not path.exists():
        raise RuntimeError(
            f"paddleviz_widget's front-end bundle ({path}) is missing. Install the package with "
            "'pip install .' (which builds it), or run 'npm ci && npm run build' in the source "
            "tree."
        )
    return path


class _LayerTree:
    """Group levels and node ancestry of one payload (same rules as js/view/graph_index.ts)."""

    def __init__(self, graph: Mapping[str, Any]) -> None:
        groups = list(graph.get("groups") or [])
        self.ids = [g["id"] for g in groups]
        self.names = {g["id"]: g.get("name") or "" for g in groups}
        known = set(self.ids)
        self.parent: dict[str, str | None] = {
            g["id"]: g.get("parent") if g.get("parent") in known else None for g in groups
        }
        for start in self.ids:  # a cycle in the parent links is cut where it closes
            path: list[str] = []
            cur: str | None = start
            while cur is not None:
                if cur in path:
                    self.parent[cur] = None
                    break
                path.append(cur)
                cur = self.parent[cur]
        self.node_groups = [
            n.get("group") if n.get("group") in known else None for n in graph.get("nodes") or []
        ]
        # A single top-level group holding every node (the model itself, as trace(model)
        # records it) is a wrapper at level -1: depth presets start with the model's layers.
        tops = [gid for gid in self.ids if self.parent[gid] is None]
        self.wrapper = (
            tops[0]
            if len(tops) == 1
            and self.node_groups
            and all(g is not None and tops[0] in (g, *self.ancestors(g)) for g in self.node_groups)
            else None
        )
        shift = 1 if self.wrapper is not None else 0
        self.level = {gid: len(self.ancestors(gid)) - shift for gid in self.ids}
        self.max_level = max(self.level.values(), default=-1)
        self.part = self._parts(graph)

    def ancestors(self, gid: str) -> list[str]:
        """Groups enclosing group ``gid``, innermost first."""
        chain: list[str] = []
        cur = self.parent.get(gid)
        while cur is not None:
            chain.append(cur)
            cur = self.parent[cur]
        return chain

    def to_depth(self, depth: int) -> list[str]:
        return [gid for gid in self.ids if self.level[gid] < depth]

    def _parts(self, graph: Mapping[str, Any]) -> dict[tuple[str, int], int]:
        """(group, node index) -> which connected part of the group the node is in. A closed
        group is drawn as one node per part (a layer used twice gives two)."""
        index = {n.get("id"): i for i, n in enumerate(graph.get("nodes") or [])}
        edges = [
            (index[e["source"]], index[e["target"]])
            for e in graph.get("edges") or []
            if e.get("source") in index and e.get("target") in index
        ]
        members: dict[str, list[int]] = {}
        for i, gid in enumerate(self.node_groups):
            for g in [gid, *self.ancestors(gid)] if gid is not None else []:
                members.setdefault(g, []).append(i)
        part: dict[tuple[str, int], int] = {}
        for g, inside in members.items():
            root = {i: i for i in inside}

            def find(i: int, root: dict[int, int] = root) -> int:
                while root[i] != i:
                    root[i] = root[root[i]]
                    i = root[i]
                return i

            for a, b in edges:
                if a in root and b in root:
                    root[find(a)] = find(b)
            for i in inside:
                part[(g, i)] = find(i)
        return part

    def visible_count(self, expanded: Iterable[str]) -> int:
        """Visible nodes: real nodes whose groups are all open, plus one node per part of
        each outermost closed group."""
        opened = set(expanded)
        shown: set[Any] = set()
        for i, gid in enumerate(self.node_groups):
            rep: Any = ("node", i)
            chain = [gid, *self.ancestors(gid)] if gid is not None else []
            for g in reversed(chain):
                if g not in opened:
                    rep = (g, self.part[(g, i)])
                    break
            shown.add(rep)
        return len(shown)

    def auto_depth(self, budget: int = DEFAULT_NODE_BUDGET) -> int:
        best = 0
        for depth in range(1, self.max_level + 2):
            if self.visible_count(self.to_depth(depth)) > budget:
                break
            best = depth
        return best


class GraphWidget(anywidget.AnyWidget):
    """Interactive view of the backward graph of ``y``.

    ``y`` is a paddle.Tensor, or a list/tuple/dict of them. The graph is built once, in the
    constructor, into plain JSON: the widget holds no reference to tensors or GradNodes.

    ``depth`` opens the layer groups down to that level (0: all collapsed); by default the
    deepest level that keeps the picture readable (about 150 visible nodes). The traits
    ``selected``, ``expanded`` and ``depth`` follow the browser and can be set from Python.
    """

    _esm = _bundle("widget.js")
    _css = _bundle("widget.css")

    graph = traitlets.Dict().tag(sync=True)
    height = traitlets.Unicode("600px").tag(sync=True)
    #: Id of the selected node, edge or layer group ("" for none).
    selected = traitlets.Unicode("").tag(sync=True)
    #: Ids of the expanded (open) layer groups.
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: Depth the layer groups were last opened to (-1: pick automatically).
    depth = traitlets.Int(-1).tag(sync=True)

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

    # -- view state ------------------------------------------------------------------------

    def _tree(self) -> _LayerTree:
        return _LayerTree(self.graph)

    @traitlets.observe("graph")
    def _on_graph(self, change: Mapping[str, Any]) -> None:
        tree = self._tree()
        ids = {n.get("id") for n in self.graph.get("nodes") or []}
        ids |= {e.get("id") for e in self.graph.get("edges") or []} | set(tree.ids)
        if self.selected and self.selected not in ids and "-" not in self.selected:
            self.selected = ""
        self._open_to(tree.auto_depth() if getattr(self, "_auto", True) else self.depth, tree)

    @traitlets.observe("depth")
    def _on_depth(self, change: Mapping[str, Any]) -> None:
        if getattr(self, "_resolving", False):
            return
        tree = self._tree()
        self._auto = change["new"] < 0
        self._open_to(tree.auto_depth() if self._auto else change["new"], tree)

    def _open_to(self, depth: int, tree: _LayerTree) -> None:
        # Deeper than the deepest level just opens everything; the depth itself is kept, so
        # GraphWidget(y, depth=2) means the same when the payload is swapped for another.
        depth = max(0, depth)
        self._resolving = True
        try:
            self.depth = depth
        finally:
            self._resolving = False
        self.expanded = tree.to_depth(depth)

    def _resolve(self, name: str) -> list[str]:
        """Group ids for a group id or a layer path such as "conv.0"."""
        tree = self._tree()
        if name in tree.names:
            return [name]
        matches = [gid for gid in tree.ids if tree.names[gid] == name]
        if matches:
            return matches
        if not tree.ids:
            raise ValueError(f"no layer group {name!r}: this graph has no layer groups")
        candidates = sorted(set(tree.names.values()) | set(tree.ids))
        close = difflib.get_close_matches(name, candidates, n=5, cutoff=0.4)
        hint = f"; close matches: {', '.join(map(repr, close))}" if close else ""
        raise ValueError(
            f"no layer group {name!r} in this graph{hint} (layer groups: "
            f"{', '.join(repr(tree.names[g] or g) for g in tree.ids[:8])}"
            f"{', ...' if len(tree.ids) > 8 else ''})"
        )

    def _set_expanded(self, ids: Iterable[str]) -> None:
        wanted = set(ids)
        self.expanded = [gid for gid in self._tree().ids if gid in wanted]

    def expand(self, name: str) -> None:
        """Open layer group ``name`` (a group id or a layer path like "conv.0") and those
        around it. Raises ValueError, listing close matches, if there is no such group."""
        tree = self._tree()
        ids = self._resolve(name)
        self._set_expanded([*self.expanded, *ids, *(a for g in ids for a in tree.ancestors(g))])

    def collapse(self, name: str) -> None:
        """Close layer group ``name`` (a group id or a layer path like "conv.0")."""
        ids = set(self._resolve(name))
        self._set_expanded(g for g in self.expanded if g not in ids)

    def expand_all(self) -> None:
        """Open every layer group (``depth`` becomes the deepest level). On a graph too big
        to lay out at once, the browser opens only what fits its visible-node budget (2,000),
        says so in its status line, and syncs that back into ``expanded``."""
        tree = self._tree()
        self._auto = False
        self._open_to(tree.max_level + 1, tree)

    def collapse_all(self) -> None:
        """Close every layer group (``depth`` becomes 0)."""
        self._auto = False
        self._open_to(0, self._tree())
