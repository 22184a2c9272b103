"""A watched run's full capture as what its document is built from, not the document: the walk
and its Annotations as plain columns in walk order (run_schema 3.0, runs/capture_read.py).

The training step gathers what only the live process can read (collect_annotations: the trace
session's records and layer scopes matched by live GradNode pointers, the model's parameter
names, unreached parameters, PyLayer contexts) and writes it as these columns; the run log's
reader makes the rows and encodes the document from them (annotated_rows + encode_rows, the same
code build_graph runs): ~40-60 ms of a 10k-GradNode capture step moved out of training. Plain
JSON types only (orjson/json), never pickle: a run dir is shared, and reading it runs no code.

Every table is aligned with the walk (one entry per node or edge, null where the Annotations
have none): what annotated_rows reads of them is exactly that (it maps each table over the
walk's pointers and edge keys), so the rows made from the columns are the rows made in the
step. Objects many nodes or edges share (gradient infos, call sites) are written once in a table
and referred to by index. Pure: no Paddle.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, repeat
from operator import attrgetter, countOf, itemgetter
from types import SimpleNamespace
from typing import Any, NamedTuple

from ...graph.codec import encode_rows
from ...graph.model import CallSite, GradInfo, GradStats, Group, ParamInfo, Slot
from ...graph.parts import GraphRows
from ..read.walk import WalkedEdge, WalkedNode, WalkResult
from .annotate import Annotations, EdgeNote, NodeSlots
from .graph_rows import annotated_rows

LAYOUT = "paddleviz_widget.capture_columns"  # the key that tells these columns from a document
VERSION = 1
# Annotations fields the columns hold (the rest are read by no part of annotated_rows, or,
# ``programs``/``steps`` beyond one, make the step write the whole document instead).
WRITTEN = frozenset({
    "edges", "slots", "groups", "group_of_ptr", "params", "call_sites", "sources", "notice",
    "notes", "trace_lost", "pylayers", "stats", "first_nonfinite", "nonfinite_in_forward",
    "grad_status", "unreached", "forward_culprit", "loss_scale", "group_sites", "node_src",
    "no_stats", "nonfinite_after_user_hook",
})  # fmt: skip
NOT_READ = frozenset({"regroup", "silent", "programs", "static_names", "layer_types", "src",
                      "steps", "step_positions"})  # fmt: skip
CULPRIT_FIELDS = ("layer", "layer_type", "inputs_finite", "before", "program", "found_by",
                  "source", "bad_params")  # fmt: skip
_BARE = EdgeNote()
_NONE_ROW = (None,) * len(GradStats.FIELDS)  # an edge without statistics
_NO_CODE = "."  # a node field's source code where it has none (codes are one letter)
_stats_values = attrgetter(*GradStats.FIELDS)
_ROOT = itemgetter(3)  # WalkedNode.root


class _StatsRow(NamedTuple):
    """An edge's statistics as read back: what encode_rows reads of a GradStats (its FIELDS,
    by name), made ~10x faster than the frozen dataclass (11k a 10k-GradNode capture)."""

    norm: float
    max_abs: float
    mean_abs: float
    zero_fraction: float
    nan: int
    inf: int


def rows_of(
    walk: WalkResult, ann: Annotations, root_tensors: dict[int, GradInfo | None],
    about: dict[str, Any],
) -> GraphRows:  # fmt: skip
    """A capture's rows, its meta what the tracer adds (``about``: Paddle's version, the
    outputs) after what the Annotations say. Both build paths run this: the step's
    (tracer/build.py) and the run log reader's (``document_of``)."""
    rows = annotated_rows(walk, ann, root_tensors)
    return rows._replace(meta={**rows.meta, **about})


def columns_of(
    walk: WalkResult, ann: Annotations, root_tensors: dict[int, GradInfo | None],
    about: dict[str, Any],
) -> dict[str, Any] | None:  # fmt: skip
    """The columns of a capture, or None when they cannot stand for its document (to_static
    programs: their ops are Node objects made from live programs; statistics of several steps)."""
    if ann.programs or len(ann.steps) > 1:
        return None
    ptrs, keys = walk.ptrs, walk.edge_keys
    names, _, roots = _node_fields(walk)
    sources, targets, slots = zip(*walk.edges) if walk.edges else ((), (), ())
    tensors = _Interned(_grad_key)
    sites = _Interned(_site_key)
    notes = list(map(ann.edges.get, keys, repeat(_BARE)))
    grads, out_slots, srcs = zip(*notes) if notes else ((), (), ())
    stats = _stats_rows(ann.stats, keys) if ann.stats else None
    node_slots = None
    if ann.slots:
        got = list(map(ann.slots.get, ptrs))
        node_slots = [None if s is None else [_slots(s.inputs, tensors), _slots(s.outputs, tensors)]
                      for s in got]  # fmt: skip
    return {
        LAYOUT: VERSION,
        "nodes": {"name": names, "ptr": ptrs, "root": roots},
        "root_indices": list(walk.root_indices),
        "edges": {"source": sources, "target": targets, "slot": slots},
        "node": {
            "group": _aligned(ann.group_of_ptr, ptrs),
            "param": _params(ann.params, ptrs),
            "call_site": sites.refs(_aligned(ann.call_sites, ptrs)),
            "grad_status": _aligned(ann.grad_status, ptrs),
            "slots": node_slots,
            "src": {f: _code_text(codes, ptrs) for f, codes in ann.node_src.items() if codes},
        },
        "edge": {
            "grad": tensors.refs(grads),
            "slot": out_slots,
            "src": srcs,
            "stats": stats,
            # why an edge has no statistics (a user's gradient hook changed it), or null
            "no_stats": list(map(ann.no_stats.get, keys)) if ann.no_stats else None,
        },
        "root_tensors": [[i, tensors.ref(g)] for i, g in root_tensors.items()],
        "groups": [[g.id, g.name, g.type, g.parent] for g in ann.groups],
        "group_sites": [list(ann.group_sites), sites.refs(list(ann.group_sites.values()))],
        "tensors": tensors.values,
        "sites": sites.values,
        "ann": {
            "sources": ann.sources,
            "notice": ann.notice,
            "notes": ann.notes,
            "trace_lost": ann.trace_lost,
            "pylayers": ann.pylayers,
            "unreached": ann.unreached,
            "first_nonfinite": ann.first_nonfinite,
            "nonfinite_after_user_hook": ann.nonfinite_after_user_hook,
            "nonfinite_in_forward": ann.nonfinite_in_forward,
            "forward_culprit": _culprit(ann.forward_culprit),
            "loss_scale": None
            if ann.loss_scale is None
            else {"scale": ann.loss_scale.scale, "dynamic": ann.loss_scale.dynamic},
        },  # fmt: skip
        "about": about,
        "meta": {},  # entries the run log adds after the document's own (its step)
    }


def is_columns(value: Any) -> bool:
    return isinstance(value, dict) and LAYOUT in value


def unreached_of(columns: dict[str, Any]) -> Any:
    """meta.unreached_params of the document the columns make (the writer's unreached.jsonl)."""
    return columns["ann"]["unreached"]


def document_of(columns: dict[str, Any]) -> dict[str, Any]:
    """The graph document the columns stand for: what the training step's build_graph path
    would have encoded (without meta.problems, as a watched capture writes it). Raises
    ValueError (or KeyError/TypeError/IndexError) on columns not made by ``columns_of``."""
    if columns.get(LAYOUT) != VERSION:
        raise ValueError(f"capture columns of version {columns.get(LAYOUT)!r}, not {VERSION}")
    walk, ann, root_tensors = _read(columns)
    about = columns["about"]
    if not isinstance(about, dict):
        raise ValueError("about is not an object")
    document = encode_rows(rows_of(walk, ann, root_tensors, about))
    document["meta"].update(columns["meta"])
    return document


def _read(columns: dict[str, Any]) -> tuple[WalkResult, Annotations, dict[int, GradInfo | None]]:
    nodes, edges, node, edge, a = (columns[k] for k in ("nodes", "edges", "node", "edge", "ann"))
    names, ptrs, roots = nodes["name"], nodes["ptr"], nodes["root"]
    n, m = len(ptrs), len(edges["source"])
    _same_length(n, names, roots, *map(node.get, ("group", "param", "call_site", "grad_status")))
    _same_length(m, edges["target"], edges["slot"], edge["grad"], edge["slot"], edge["src"])
    if not all(isinstance(p, int) for p in ptrs) or len(set(ptrs)) != n:
        raise ValueError("node pointers are not distinct integers")
    walk = WalkResult(
        tuple(map(WalkedNode, range(n), names, ptrs, map(bool, roots))),
        tuple(map(WalkedEdge, edges["source"], edges["target"], edges["slot"])),
        tuple(columns["root_indices"]),
    )
    for i in (*walk.root_indices, *edges["source"], *edges["target"]):
        if not (isinstance(i, int) and 0 <= i < n):
            raise ValueError(f"node index {i!r} out of range")
    tensors = [GradInfo(d, None if s is None else tuple(s), p) for d, s, p in columns["tensors"]]
    sites = [CallSite(f, line, fn) for f, line, fn in columns["sites"]]
    keys = walk.edge_keys
    ann = Annotations(
        groups=tuple(Group(*g) for g in columns["groups"]),
        group_of_ptr=_table(ptrs, node["group"]),
        params=_table(ptrs, _params_of(node["param"])),
        call_sites=_table(ptrs, _deref(node["call_site"], sites)),
        grad_status=_table(ptrs, node["grad_status"]),
        group_sites=_group_sites(columns["group_sites"], sites),
        node_src={f: _codes(ptrs, codes) for f, codes in node["src"].items()},
        sources=list(a["sources"]), notice=a["notice"], notes=list(a["notes"]),
        trace_lost=a["trace_lost"], pylayers=list(a["pylayers"]), unreached=list(a["unreached"]),
        first_nonfinite=a["first_nonfinite"], nonfinite_in_forward=a["nonfinite_in_forward"],
        nonfinite_after_user_hook=bool(a.get("nonfinite_after_user_hook")),
        forward_culprit=_culprit_of(a["forward_culprit"]),
        loss_scale=None if a["loss_scale"] is None else SimpleNamespace(**a["loss_scale"]),
    )  # fmt: skip
    grads = _column(_deref(edge["grad"], tensors), m)
    # Every edge gets its note, a bare one too (annotated_rows reads a missing note as bare):
    # made in C, no loop per edge (11k on the 10k-GradNode Llama)
    ann.edges = dict(zip(keys, map(EdgeNote, grads, edge["slot"], edge["src"])))
    if edge["stats"] is not None:
        stats = _column(edge["stats"], m)
        given = [s[0] is not None for s in stats]
        read: dict[tuple[int, int], Any] = dict(
            zip(compress(keys, given), map(_StatsRow._make, compress(stats, given)))
        )
        ann.stats = read  # (encode_rows reads a GradStats' FIELDS by name: _StatsRow has them)
    no_stats = edge.get("no_stats")
    if no_stats is not None:
        ann.no_stats = {k: v for k, v in zip(keys, _column(no_stats, m)) if v is not None}
    if node["slots"] is not None:
        ann.slots = {
            p: NodeSlots(_slots_of(s[0], tensors), _slots_of(s[1], tensors))
            for p, s in zip(ptrs, _column(node["slots"], n))
            if s is not None
        }
    root_tensors = {i: None if k is None else tensors[k] for i, k in columns["root_tensors"]}
    return walk, ann, root_tensors


def _stats_rows(stats: dict[tuple[int, int], Any], keys: Sequence[Any]) -> list[Any]:
    """Each edge's statistics as a tuple of GradStats.FIELDS' values (all None where it has
    none), in C, no loop per edge: a capture's come as such tuples (stats_rows.BackwardStats.
    rows), taken as they are; a GradStats (statistics read as objects first) by its FIELDS."""
    got = list(map(stats.get, keys, repeat(_NONE_ROW)))
    if countOf(map(type, got), tuple) == len(got):
        return got
    return [s if type(s) is tuple else _stats_values(s) for s in got]


def _node_fields(walk: WalkResult) -> tuple[Sequence[str], Sequence[int], list[int]]:
    ptrs, names = walk.ptrs, walk.names  # (cached: collect_annotations made them)
    # one name per pointer (a walk's pointers are distinct: document_of refuses others)
    in_order = list(names.values()) if len(names) == len(ptrs) else [n.name for n in walk.nodes]
    return in_order, ptrs, list(map(int, map(_ROOT, walk.nodes)))


def _group_sites(value: list[Any], sites: list[CallSite]) -> dict[str, CallSite]:
    ids, refs = value
    _same_length(len(ids), refs)
    return dict(zip(ids, _deref(refs, sites) or ()))


def _params(params: dict[int, ParamInfo], ptrs: Sequence[int]) -> list[Any] | None:
    if not params:
        return None
    return [None if p is None else [p.name, p.shape, p.dtype] for p in map(params.get, ptrs)]


def _params_of(values: list[Any] | None) -> list[ParamInfo | None] | None:
    if values is None:
        return None
    return [None if p is None else ParamInfo(p[0], None if p[1] is None else tuple(p[1]), p[2])
            for p in values]  # fmt: skip


def _aligned(table: dict[int, Any], ptrs: Sequence[int]) -> list[Any] | None:
    return list(map(table.get, ptrs)) if table else None


def _column(values: list[Any] | None, n: int) -> list[Any]:
    if values is None:
        return [None] * n
    _same_length(n, values)
    return values


def _table(ptrs: Sequence[int], values: list[Any] | None) -> dict[int, Any]:
    """The Annotations table an aligned column came from (its entries in walk order)."""
    if values is None:
        return {}
    _same_length(len(ptrs), values)
    return {p: v for p, v in zip(ptrs, values) if v is not None}


def _code_text(codes: dict[int, str], ptrs: Sequence[int]) -> str | list[str | None]:
    """A node field's source code per node, as one string ("." none): codes are one letter
    (annotate.NODE_SOURCES); else (never made so far) a list."""
    text = "".join(map(codes.get, ptrs, repeat(_NO_CODE)))
    return text if len(text) == len(ptrs) else list(map(codes.get, ptrs))


def _codes(ptrs: Sequence[int], values: str | list[str | None]) -> dict[int, Any]:
    """A node field's source codes. Written only when the step had some (sources_meta spells a
    field out whenever its table is not empty, even if none of its nodes is in this graph):
    such a table stays not empty here (-1 is no GradNode's pointer; nothing reads it)."""
    _same_length(len(ptrs), values)
    if isinstance(values, str):
        found = {p: c for p, c in zip(ptrs, values) if c != _NO_CODE}
    else:
        found = _table(ptrs, values)
    return found or {-1: None}


def _same_length(n: int, *columns: Any) -> None:
    for column in columns:
        if column is not None and len(column) != n:
            raise ValueError(f"a column of {len(column)} entries where {n} are expected")


def _deref(refs: list[int | None] | None, table: list[Any]) -> list[Any] | None:
    """The objects ``refs`` index in ``table`` (None stays None; another index: KeyError)."""
    if refs is None:
        return None
    at: dict[int | None, Any] = dict(enumerate(table))
    at[None] = None
    return list(map(at.__getitem__, refs))


def _index(k: Any) -> int:
    if not isinstance(k, int) or k < 0:
        raise ValueError(f"table index {k!r}")
    return k


def _grad_key(g: GradInfo) -> list[Any]:
    return [g.dtype, g.shape, g.place]


def _site_key(c: CallSite) -> list[Any]:
    return [c.file, c.line, c.function]


class _Interned:
    """Objects shared by many nodes or edges, each written once (indexed by first use);
    found by identity first (the tracer makes one object per distinct value), then by value."""

    def __init__(self, key: Any) -> None:
        self.key = key
        self.values: list[Any] = []
        self._by_id: dict[int, int] = {}
        self._by_value: dict[Any, int] = {}

    def ref(self, obj: Any) -> int | None:
        if obj is None:
            return None
        k = self._by_id.get(id(obj))
        if k is None:
            value = self.key(obj)
            hashable = repr(value)
            k = self._by_value.get(hashable)
            if k is None:
                k = self._by_value[hashable] = len(self.values)
                self.values.append(value)
            self._by_id[id(obj)] = k
        return k

    def refs(self, objs: Sequence[Any] | None) -> list[int | None] | None:
        """Each object's index (None stays None); the objects stay alive meanwhile (the
        caller's list), so an id is never reused while this runs."""
        if objs is None:
            return None
        ids = list(map(id, objs))
        first = dict(zip(ids, objs))  # one object per distinct id, in order of first use
        known = {i: self.ref(o) for i, o in first.items()}
        return list(map(known.__getitem__, ids))


def _slots(slots: tuple[Slot, ...], tensors: _Interned) -> list[list[Any]]:
    return [[s.name, s.tensor, tensors.ref(s.grad)] for s in slots]


def _slots_of(values: list[list[Any]], tensors: list[GradInfo]) -> tuple[Slot, ...]:
    return tuple(Slot(n, t, None if g is None else tensors[_index(g)]) for n, t, g in values)


def _culprit(culprit: Any) -> dict[str, Any] | None:
    if culprit is None:
        return None
    return {f: getattr(culprit, f, None) for f in CULPRIT_FIELDS}


def _culprit_of(value: dict[str, Any] | None) -> Any:
    """What forward_nonfinite_meta reads of a forward_finite.ForwardCulprit (capture/, which
    the run log's reader does not import: it imports NumPy and the tensor reads)."""
    if value is None:
        return None
    return SimpleNamespace(**{f: value.get(f) for f in CULPRIT_FIELDS})
