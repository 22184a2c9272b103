"""The walked graph and its Annotations as the graph's rows (graph/parts.py GraphRows): one
tuple per node and edge, each field a column made in one pass over the walk. build_graph
encodes these rows as they are (no Node or Edge object per node and edge: 100k of each on
big graphs); ``annotated_graph`` makes the objects from them for the Python API."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Any

from ...graph.groups import with_ancestors
from ...graph.model import GradInfo, GradStats, Graph, Group
from ...graph.parts import Columns, GraphRows, parts_of
from ..read.walk import ACCUMULATION_NODE, WalkResult
from .annotate import Annotations, EdgeNote, NodeSlots, sources_meta, stats_meta

_BARE = EdgeNote()  # an edge nothing annotates


def annotated_graph(
    walk: WalkResult, ann: Annotations, root_tensors: dict[int, GradInfo | None] | None = None
) -> Graph:
    """``annotated_rows`` as a Graph of Node and Edge objects."""
    return Graph(*parts_of(annotated_rows(walk, ann, root_tensors)))


def annotated_rows(
    walk: WalkResult, ann: Annotations, root_tensors: dict[int, GradInfo | None] | None = None
) -> GraphRows:
    """The walked graph, with stable ids ("n<k>" in BFS order, "e<k>" in edge order), and
    everything ``ann`` knows. ``root_tensors``: walk index -> the user's tensor it produced.

    Column by column, each a map or a comprehension over the walk: this runs on graphs with
    100k nodes and edges."""
    nodes, ptrs = walk.nodes, walk.ptrs
    n = len(nodes)
    # The walk's tuples transposed (in C): one column per field.
    indexes, names, _, roots, _ = zip(*nodes) if nodes else ((),) * 5
    ids = list(map("n%d".__mod__, indexes))  # also each edge's source and target
    kinds = [
        "param" if name == ACCUMULATION_NODE else "output" if root else "op"
        for name, root in zip(names, roots)
    ]
    group_col = list(map(ann.group_of_ptr.get, ptrs))
    if ann.slots:
        no_slots, slots_of = NodeSlots(), ann.slots.get
        slots = [slots_of(p, no_slots) for p in ptrs]
        inputs: Sequence[Any] = [s.inputs for s in slots]
        outputs: Sequence[Any] = [s.outputs for s in slots]
    else:  # no backward log (big graphs): no node has slots
        inputs = outputs = ((),) * n
    nones = (None,) * n
    tensors = list(map((root_tensors or {}).get, indexes)) if root_tensors else nones
    node_rows = Columns(
        ids, names, list(map(hex, ptrs)), kinds, group_col, _column(ann.params, ptrs),
        _column(ann.call_sites, ptrs), inputs, outputs, tensors,
        _column(ann.grad_status, ptrs), nones,
    )  # fmt: skip
    m = len(walk.edges)
    sources, targets, slots_at = zip(*walk.edges) if m else ((),) * 3
    keys = walk.edge_keys
    notes = list(map(ann.edges.get, keys, repeat(_BARE, m)))
    grads, out_slots, _ = zip(*notes) if m else ((),) * 3
    srcs = [None if grad is None else src for grad, _, src in notes]
    edge_nones = (None,) * m
    edge_rows = Columns(
        list(map("e%d".__mod__, range(m))), list(map(ids.__getitem__, sources)),
        list(map(ids.__getitem__, targets)), slots_at, grads, out_slots,
        _stats_column(ann.stats, keys) if ann.stats else edge_nones, edge_nones,
        list(map(ann.no_stats.get, keys)) if ann.no_stats else edge_nones,
    )  # fmt: skip
    groups = _used_groups(ann.groups, group_col)
    return GraphRows(node_rows, edge_rows, groups, _meta(ann, walk, srcs))


def _stats_column(stats: dict[tuple[int, int], Any], keys: Sequence[Any]) -> list[Any]:
    """Each edge's GradStats (None where it has none). A capture's statistics come as plain
    tuples of GradStats.FIELDS' values (stats_rows.BackwardStats.rows): made GradStats here,
    for the edges kept, so that a watched run's capture (its columns take the tuples) makes
    none; a run log's _StatsRow (a tuple's subclass) and a GradStats stay as they are."""
    got = list(map(stats.get, keys))
    return [GradStats(*s) if type(s) is tuple else s for s in got]


def _column(table: dict[int, Any], ptrs: Sequence[int]) -> Sequence[Any]:
    """table's value per node (None where it has none)."""
    return list(map(table.get, ptrs)) if table else (None,) * len(ptrs)


def _meta(ann: Annotations, walk: WalkResult, srcs: list[str | None]) -> dict[str, Any]:
    meta: dict[str, Any] = {"annotations": sorted(set(ann.sources))}
    notices = [n for n in (ann.notice, *ann.notes) if n]
    if notices:
        meta["notice"] = notices[0]
    if len(notices) > 1:
        meta["notices"] = notices
    sources = sources_meta(srcs, ann, walk)
    if sources is not None:
        meta["sources"] = sources
    if ann.trace_lost is not None:
        meta["trace_lost"] = ann.trace_lost
    meta.update(stats_meta(ann, walk))
    if ann.pylayers:
        index_of = {w.ptr: w.index for w in walk.nodes}
        meta["pylayers"] = [
            {"node": f"n{index_of[p['ptr']]}", **{k: v for k, v in p.items() if k != "ptr"}}
            for p in ann.pylayers
            if p["ptr"] in index_of
        ]
    return meta


def _used_groups(groups: tuple[Group, ...], used: Iterable[str | None]) -> tuple[Group, ...]:
    """Keep the groups that hold a node, and their ancestors, in the recorder's order."""
    keep = with_ancestors(used, {g.id: g.parent for g in groups})
    return tuple(g for g in groups if g.id in keep)
