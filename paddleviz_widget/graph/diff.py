"""The diff of two backward graphs (two training steps, float32 and AMP, two versions of a
model): one graph document (schema 2.2) that holds both, with every node and edge that is only
in b ("added"), only in a ("removed") or in both but not the same ("changed", and what) marked
in its ``diff``; and ``diff_summary``, the same as lists. Pure data: reads and writes graph
documents, no Paddle.

Matching is graph/diff_match.py's (never by pointer), comparing graph/diff_compare.py's. A
matched node or edge keeps b's values, a removed one a's. Ids are new (``n<k>``, ``e<k>``,
``g<k>``), in b's order with what only a has placed after its predecessor in a.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import PaddlevizError
from .codec import decode_parts, encode_parts
from .diff_align import b_paths, moved_layers
from .diff_compare import edge_changes, input_size_notice, node_changes
from .diff_match import Match, match_edges, match_groups, match_nodes
from .parts import DIFF_STATUSES, DiffMark, Edge, GraphParts, Group, Node

DEFAULT_RTOL = 0.1


def diff_graphs(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    *,
    rtol: float = DEFAULT_RTOL,
    labels: Sequence[str] = ("a", "b"),
    stats: bool = True,
) -> dict[str, Any]:
    """The diff of graph documents ``a`` and ``b`` (as ``build_graph`` returns them) as one
    graph document. ``rtol``: how far a gradient's norm or max |g| may move, relative to the
    larger of the two, before the edge counts as changed (a NaN/Inf count that changes always
    does). ``labels`` name the two graphs in the notices and the explorer. ``stats=False``
    compares structure alone (no gradient statistics): two ranks, whose batches differ."""
    rtol = _check_rtol(rtol)
    names = _check_labels(labels)
    if not isinstance(stats, bool):
        raise TypeError(f"stats must be True or False, got {stats!r}")
    ga, gb = _read(a, names[0]), _read(b, names[1])
    _like_with_like(ga, gb, names)
    asked, stats = stats, stats and _has_stats(ga) and _has_stats(gb)
    scales = (loss_scale(ga), loss_scale(gb))

    keys = b_paths(ga, gb)  # which layer of b is which of a: by path, or shifted by position
    group_ids, a_new, b_new = _union_ids("g", match_groups(ga, gb, keys), len(ga.groups))
    a_gid = {g.id: a_new[k] for k, g in enumerate(ga.groups)}
    b_gid = {g.id: b_new[k] for k, g in enumerate(gb.groups)}
    groups = [
        _group(ga.groups[i], a_gid) if side == "a" else _group(gb.groups[i], b_gid)
        for side, i in group_ids
    ]

    node_match = match_nodes(ga, gb, keys)
    node_ids, a_nid, b_nid = _union_ids("n", node_match, len(ga.nodes))
    nodes = []
    for side, i in node_ids:
        if side == "a":
            node = ga.nodes[i]
            nodes.append(_node(node, a_nid[i], _gid(a_gid, node.group), _REMOVED))
            continue
        node, j = gb.nodes[i], node_match[i]
        mark = _ADDED if j is None else _changed(node_changes(ga.nodes[j], node, stats=stats))
        nodes.append(_node(node, b_nid[i], _gid(b_gid, node.group), mark))

    ends_a = {n.id: a_nid[i] for i, n in enumerate(ga.nodes)}
    ends_b = {n.id: b_nid[i] for i, n in enumerate(gb.nodes)}
    edge_match = match_edges(ga.edges, gb.edges, ends_a, ends_b)
    edge_ids, a_eid, b_eid = _union_ids("e", edge_match, len(ga.edges))
    edges = []
    for side, i in edge_ids:
        if side == "a":
            edges.append(_edge(ga.edges[i], a_eid[i], ends_a, _REMOVED))
            continue
        edge, j = gb.edges[i], edge_match[i]
        changes = (
            edge_changes(ga.edges[j], edge, rtol=rtol, scales=scales, stats=stats)
            if j is not None
            else []
        )
        mark = _ADDED if j is None else _changed(changes)
        edges.append(_edge(edge, b_eid[i], ends_b, mark))

    meta = _meta(ga, gb, ends_a, ends_b, nodes, edges)
    meta["diff"] = {
        "labels": names,
        "rtol": rtol,
        "counts": _counts(nodes, edges),
        "compared": ["shape", "stats"] if stats else ["shape"],
    }
    moved = moved_layers(gb, keys)
    if moved:  # a layer inserted or taken out shifted these names: matched by position
        meta["diff"]["moved"] = moved
    notices = _notices(ga, gb, names, asked)
    marks = [x.diff for x in nodes] + [x.diff for x in edges]
    sizes = input_size_notice([m for m in marks if m is not None], names)
    notices = notices if sizes is None else [sizes, *notices]
    if notices:
        meta["notice"] = notices[0]
        if len(notices) > 1:
            meta["notices"] = notices
    return encode_parts(GraphParts(tuple(nodes), tuple(edges), tuple(groups), meta))


def diff_summary(doc: Mapping[str, Any]) -> dict[str, Any]:
    """What a diff document (``diff_graphs``) marks, as lists: ``added``, ``removed`` and
    ``changed``, each entry a node or edge with its layer path, op and changes (an edge: the
    layer and op it goes into too, ``to_layer`` and ``to``); plus the
    labels, ``rtol``, the counts, what was compared and ``moved``: the layers matched under
    another name, as [a's path, b's path] (a layer inserted before them in a container)."""
    graph = decode_parts(doc)
    info = graph.meta.get("diff")
    if not isinstance(info, Mapping):
        raise ValueError(
            "this graph is not a diff of two graphs: GraphWidget.diff(a, b) (or "
            "paddleviz_widget.graph.diff_graphs(a, b)) makes one"
        )
    layer = {g.id: g.name for g in graph.groups}
    nodes = {n.id: n for n in graph.nodes}
    out: dict[str, Any] = {key: info.get(key) for key in ("labels", "rtol", "counts", "compared")}
    # [a's path, b's path] per layer matched at another position in its container
    out["moved"] = [list(pair) for pair in info.get("moved") or []]
    for status in DIFF_STATUSES:
        out[status] = []
    for n in graph.nodes:
        if n.diff is not None:
            entry = {"kind": "node", "id": n.id, "layer": layer.get(n.group or ""), "op": n.name}
            if n.param is not None:
                entry["param"] = n.param.name
            out[n.diff.status].append({**entry, "changes": _changes(n.diff)})
    for e in graph.edges:
        if e.diff is not None:
            source, target = nodes.get(e.source), nodes.get(e.target)
            if source is None or target is None:
                raise ValueError(f"edge {e.id} points at a node this document does not have")
            entry = {"kind": "edge", "id": e.id, "layer": layer.get(source.group or "")}
            # where it goes too: a residual Add sends to the block before and into its own
            # sub-layer, two entries that read alike by their source and target ops alone
            entry.update(op=source.name, to=target.name, to_layer=layer.get(target.group or ""))
            if target.param is not None:
                entry["to_param"] = target.param.name
            if e.slot is not None:
                entry["slot"] = e.slot
            out[e.diff.status].append({**entry, "changes": _changes(e.diff)})
    return out


_ADDED = DiffMark("added")
_REMOVED = DiffMark("removed")


def _changed(changes: list[Any]) -> DiffMark | None:
    return DiffMark("changed", tuple(changes)) if changes else None


def _changes(mark: DiffMark) -> list[dict[str, Any]]:
    out = []
    for c in mark.changes:
        entry: dict[str, Any] = {"field": c.field}
        if c.of is not None:
            entry["of"] = c.of
        out.append({**entry, "a": _plain(c.a), "b": _plain(c.b)})
    return out


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def _check_rtol(rtol: Any) -> float:
    ok = isinstance(rtol, (int, float)) and not isinstance(rtol, bool)
    if not ok or not math.isfinite(rtol) or rtol < 0:
        raise ValueError(f"rtol must be a number >= 0 (e.g. 0.1 for 10%), got {rtol!r}")
    return float(rtol)


def _check_labels(labels: Any) -> list[str]:
    if isinstance(labels, str) or not isinstance(labels, Sequence) or len(labels) != 2:
        raise ValueError(
            f"labels must be two strings, one per graph (e.g. ('fp32', 'amp')), got {labels!r}"
        )
    if not all(isinstance(x, str) and x for x in labels):
        raise ValueError(f"labels must be two non-empty strings, got {labels!r}")
    return [str(x) for x in labels]


def _read(doc: Any, label: str) -> GraphParts:
    if not isinstance(doc, Mapping):
        raise TypeError(
            f"graph {label!r} must be a graph document (a dict), not {type(doc).__name__}"
        )
    try:
        graph = decode_parts(doc)
    except ValueError as exc:
        raise ValueError(
            f"graph {label!r} is not a graph document build_graph wrote ({exc}); pass the dict "
            "build_graph(y) returned, or json.load of a file it was saved to"
        ) from exc
    made = graph.meta.get("diff")
    if isinstance(made, Mapping):  # a union: a's removed nodes would be read as present
        names = made.get("labels")
        was = (
            f" of {names[0]!r} and {names[1]!r}"
            if isinstance(names, list) and len(names) == 2
            else ""
        )
        raise ValueError(
            f"graph {label!r} is already a diff{was}: it holds both graphs' nodes, so what it "
            "marks removed would be compared as present; diff the graph documents it was made "
            "from (build_graph(y) of each, or the .json files they were saved to)"
        )
    ids = {n.id for n in graph.nodes}
    if len(ids) != len(graph.nodes):
        raise ValueError(f"graph {label!r}: duplicate node ids")
    for e in graph.edges:
        for end in (e.source, e.target):
            if end not in ids:
                raise ValueError(
                    f"graph {label!r}: edge {e.id} points at node {end}, which it does not have"
                )
    return graph


def _like_with_like(ga: GraphParts, gb: GraphParts, names: list[str]) -> None:
    """Refuse to compare a graph that lost its trace's annotations (meta ``trace_lost``) with
    one that has them: every difference found would come from that alone."""
    lost = [name for name, g in zip(names, (ga, gb)) if g.meta.get("trace_lost")]
    if len(lost) == 1:
        other = names[1] if lost[0] == names[0] else names[0]
        raise PaddlevizError(
            f"graph {lost[0]!r} lost its trace annotations (layer groups, gradient shapes, "
            f"parameter names...): {ga.meta.get('trace_lost') or gb.meta.get('trace_lost')}. "
            f"Compared with {other!r}, every difference would come from that alone; build both "
            "graphs right after their traces (build_graph(y)) and diff those documents."
        )


def _has_stats(graph: GraphParts) -> bool:
    return any(e.stats is not None for e in graph.edges)


def _union_ids(
    prefix: str, match: Match, size_a: int
) -> tuple[list[tuple[str, int]], list[str], list[str]]:
    """The union's items in order, as (side, position): b's in its order, each of a's left
    over right after the item of its predecessor in a (at the start without one); their new
    ids per position in a and in b (a matched item of a gets its match's)."""
    b_of_a: list[int | None] = [None] * size_a
    for j, i in enumerate(match):
        if i is not None:
            b_of_a[i] = j
    head: list[int] = []
    after: dict[int, list[int]] = {}
    last: int | None = None
    for i, at in enumerate(b_of_a):
        if at is not None:
            last = at
        elif last is None:
            head.append(i)
        else:
            after.setdefault(last, []).append(i)
    order = [("a", i) for i in head]
    for j in range(len(match)):
        order.append(("b", j))
        order.extend(("a", i) for i in after.get(j, ()))
    a_ids, b_ids = [""] * size_a, [""] * len(match)
    for k, (side, i) in enumerate(order):
        (a_ids if side == "a" else b_ids)[i] = f"{prefix}{k}"
    for j, i in enumerate(match):
        if i is not None:
            a_ids[i] = b_ids[j]
    return order, a_ids, b_ids


def _group(group: Group, ids: dict[str, str]) -> Group:
    return Group(ids[group.id], group.name, group.type, ids.get(group.parent or ""))


def _gid(ids: dict[str, str], gid: str | None) -> str | None:
    return None if gid is None else ids.get(gid)


# Built field by field: dataclasses.replace costs several times more, per node of a 10k graph.
def _node(n: Node, uid: str, group: str | None, mark: DiffMark | None) -> Node:
    return Node(
        id=uid,
        name=n.name,
        ptr=n.ptr,
        kind=n.kind,
        group=group,
        param=n.param,
        call_site=n.call_site,
        inputs=n.inputs,
        outputs=n.outputs,
        tensor=n.tensor,
        grad_status=n.grad_status,
        diff=mark,
    )


def _edge(e: Edge, uid: str, ends: dict[str, str], mark: DiffMark | None) -> Edge:
    return Edge(
        id=uid,
        source=ends[e.source],
        target=ends[e.target],
        index=e.index,
        grad=e.grad,
        slot=e.slot,
        stats=e.stats,
        diff=mark,
    )


def _counts(nodes: list[Node], edges: list[Edge]) -> dict[str, dict[str, int]]:
    counts = {s: {"nodes": 0, "edges": 0} for s in DIFF_STATUSES}
    for kind, items in (("nodes", nodes), ("edges", edges)):
        for item in items:
            if item.diff is not None:
                counts[item.diff.status][kind] += 1
    return counts


def _meta(
    ga: GraphParts,
    gb: GraphParts,
    ends_a: dict[str, str],
    ends_b: dict[str, str],
    nodes: list[Node],
    edges: list[Edge],
) -> dict[str, Any]:
    """b's provenance; the outputs and PyLayer facts of b's nodes and of a's removed ones, under
    their new ids. What is keyed by the old ids and holds one graph's numbers (first NaN/Inf,
    kept steps) is left out: the diff's own marks say how the two differ."""
    removed = {n.id for n in nodes if n.diff is not None and n.diff.status == "removed"}
    meta: dict[str, Any] = {
        k: gb.meta[k] for k in ("paddle_version", "annotations", "source") if k in gb.meta
    }
    for key in ("outputs", "pylayers"):
        entries = []
        for graph, ends, keep in ((gb, ends_b, None), (ga, ends_a, removed)):
            for entry in graph.meta.get(key) or []:
                node = entry.get("node") if isinstance(entry, Mapping) else None
                uid = ends.get(node) if isinstance(node, str) else None
                if uid is not None and (keep is None or uid in keep):
                    entries.append({**entry, "node": uid})
        if entries:
            meta[key] = entries
    return meta


def loss_scale(graph: GraphParts) -> float:
    """The factor a GradScaler multiplied the graph's gradients by (meta.loss_scale), else 1."""
    entry = graph.meta.get("loss_scale")
    scale = entry.get("scale") if isinstance(entry, Mapping) else None
    if isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0:
        return float(scale)
    return 1.0


def _notices(ga: GraphParts, gb: GraphParts, labels: list[str], stats: bool) -> list[str]:
    """Why a comparison was not made, then each graph's own notices, under its label
    (``stats``: whether statistics were asked for; if not, nothing is said of them)."""
    lines = []
    sa, sb = (_has_stats(ga), _has_stats(gb)) if stats else (False, False)
    if sa != sb:
        lines.append(
            f"Gradient statistics are not compared: graph {labels[1 if sa else 0]!r} has none "
            "(build it inside trace(model, stats=True))."
        )
    scales = (loss_scale(ga), loss_scale(gb))
    if sa and sb and scales[0] != scales[1]:
        lines.append(
            f"Gradient norms and max |g| are compared divided by each graph's GradScaler loss "
            f"scale ({labels[0]!r}: {scales[0]:g}, {labels[1]!r}: {scales[1]:g}): as the "
            "optimizer applies them."
        )
    grads = [any(e.grad is not None for e in g.edges) for g in (ga, gb)]
    if grads[0] != grads[1]:
        lines.append(
            f"Gradient dtypes and shapes on edges are not compared: graph "
            f"{labels[1 if grads[0] else 0]!r} has none (build it before backward(), or inside "
            "trace(model))."
        )
    for label, graph in zip(labels, (ga, gb)):
        own = graph.meta.get("notices")
        if not isinstance(own, list):
            own = [graph.meta["notice"]] if graph.meta.get("notice") else []
        lines.extend(f"{label}: {line}" for line in own if isinstance(line, str) and line)
    return lines
