"""Gather every annotation available for a walked graph: the trace() session that saw it,
parameter names, and, if edges are still bare, one replayed backward."""

from __future__ import annotations

from typing import Any

from ..graph.model import GradInfo
from .annotate import Annotations, EdgeNote
from .backward_capture import CapturedBackward
from .log_annotations import align_copied_runs, copied_dump_edges, from_dump, from_log
from .params import param_infos_by_ptr
from .replay import discover_model, find_leaves, graph_was_freed, replay_backward
from .session import RECENT_SESSIONS, SLOT_LOG_MAX_NODES, BackwardRecord, TraceSession
from .walk import ACCUMULATION_NODE, WalkResult, next_ptrs

NO_TRACE_NOTICE = (
    "Gradient shapes need Paddle's backward log: wrap forward and backward in "
    "`with paddleviz_widget.trace(model):`, or build the graph before calling backward()."
)
# A layer-scope match on pointers alone could be a freed node's reused address; unless a backward
# record vouches for the graph, require the op nodes the session knows to keep their names.
SCOPE_MATCH_FRACTION = 0.9


class _Graph:
    """The walked graph in the shapes the annotation sources want."""

    def __init__(self, walk: WalkResult) -> None:
        self.walk = walk
        self.nexts = next_ptrs(walk)
        self.names = {n.ptr: n.name for n in walk.nodes}
        self.roots = [walk.nodes[i] for i in walk.root_indices]
        self.ops = [n.ptr for n in walk.nodes if n.name != ACCUMULATION_NODE]

    def edge_count(self) -> int:
        return len(self.walk.edges)


def _record_contains(record: BackwardRecord, graph: _Graph) -> bool:
    return all(root.ptr in record.node_ptrs() for root in graph.roots)


def _add_captured(ann: Annotations, captured: CapturedBackward, graph: _Graph, copies: bool,
                  record_walk: WalkResult) -> None:  # fmt: skip
    """``record_walk``: the graph the backward ran on (what copied nodes are aligned to)."""
    log, dump = captured.log, captured.dump
    dump_edges: dict[tuple[int, int], EdgeNote] = {}
    if copies and (log is not None or dump is not None):
        # paddle.grad ran on copies of the nodes: re-key what it logged to our pointers.
        same = record_walk is graph.walk
        roots = [(n.ptr, n.name) for n in (record_walk.nodes[i] for i in record_walk.root_indices)]
        nexts = graph.nexts if same else next_ptrs(record_walk)
        names = graph.names if same else {n.ptr: n.name for n in record_walk.nodes}
        log = align_copied_runs(log, roots, nexts, names) if log is not None else None
        if dump is not None:
            dump_edges = copied_dump_edges(dump, roots, nexts, names)
    elif dump is not None:
        dump_edges = from_dump(dump, graph.nexts)
    if captured.problems and ann.notice is None:  # e.g. this Paddle cannot switch VLOG on
        ann.notice = captured.problems[0]
    if log is not None and log.runs:
        edges, slots = from_log(log, graph.nexts)
        ann.add_edges(edges)
        for ptr, node_slots in slots.items():
            ann.slots.setdefault(ptr, node_slots)
        ann.sources.append("vlog")
    if dump_edges:
        ann.add_edges(dump_edges)
        ann.sources.append("dump")
    if not copies:
        for ptr, site in captured.call_sites.items():
            ann.call_sites.setdefault(ptr, site)


def _add_scopes(ann: Annotations, session: TraceSession, graph: _Graph, trusted: bool) -> bool:
    """Layer groups from the session's forward. ``trusted``: a backward record of the same
    session contains this graph, so its nodes were alive throughout and cannot be reused
    addresses; otherwise most op nodes the session knows must agree on their names."""
    scopes = session.scopes
    if scopes is None:
        return False
    seen = [p for p in graph.ops if p in scopes.node_names]
    agree = sum(1 for p in seen if scopes.node_names[p] == graph.names[p])
    if not agree or (not trusted and agree < SCOPE_MATCH_FRACTION * len(seen)):
        return False
    mine = scopes.restricted_to(
        p for p in graph.names if scopes.node_names.get(p, graph.names[p]) == graph.names[p]
    )
    ann.groups = mine.groups
    ann.group_of_ptr = dict(mine.group_of_ptr)
    for ptr, gid in mine.group_of_ptr.items():  # ops Paddle gave no stack: where the layer ran
        site = mine.node_sites.get(ptr) or mine.call_sites.get(gid)
        if site is not None and graph.names.get(ptr) != ACCUMULATION_NODE:
            ann.call_sites.setdefault(ptr, site)
    ann.sources.append("layers")
    return True


def collect_annotations(
    walk: WalkResult, roots: list[Any], *, model: Any = None, params: Any = None,
    replay: bool = True,
) -> Annotations:  # fmt: skip
    graph = _Graph(walk)
    ann = Annotations()
    session_model = None
    for session in RECENT_SESSIONS.newest_first():
        records = [r for r in session.records if _record_contains(r, graph)]
        for record in reversed(records):  # newest backward first
            record_walk = record.walk() if record.copies else graph.walk  # only copies need it
            _add_captured(ann, record.captured, graph, record.copies, record_walk)
        scoped = _add_scopes(ann, session, graph, trusted=bool(records))
        if records or scoped:
            session_model = session.model
            break
    accumulation = {n.ptr for n in walk.nodes if n.name == ACCUMULATION_NODE}
    model = model if model is not None else session_model
    if model is None and params is None:
        model = discover_model(accumulation)
    ann.params = param_infos_by_ptr(model=model, params=params) if (model or params) else {}

    bare = graph.edge_count() - sum(1 for n in ann.edges.values() if n.grad is not None)
    if replay and bare > 0:
        leaves = find_leaves(accumulation, model=model, params=params)
        try:
            log = len(walk.nodes) <= SLOT_LOG_MAX_NODES  # as trace(slots=None) decides
            captured = replay_backward(roots, leaves, log=log) if leaves else None
        except Exception as exc:  # noqa: BLE001 - annotations are optional; the graph is not
            captured = None
            if not graph_was_freed(exc):
                ann.notice = f"Could not replay the backward for annotations: {exc}"
        if captured is not None:
            # The replay ran from our roots: its graph is the one we walked.
            _add_captured(ann, captured, graph, True, walk)
    _add_param_shaped_edges(ann, graph)
    bare = graph.edge_count() - sum(1 for n in ann.edges.values() if n.grad is not None)
    if bare > 0 and ann.notice is None:
        ann.notice = NO_TRACE_NOTICE
    return ann


def _add_param_shaped_edges(ann: Annotations, graph: _Graph) -> None:
    """A parameter's gradient has the parameter's dtype and shape: known without any log."""
    nodes = graph.walk.nodes
    for edge in graph.walk.edges:
        info = ann.params.get(nodes[edge.target].ptr)
        key = (nodes[edge.source].ptr, edge.slot)
        if info is not None and info.shape is not None and key not in ann.edges:
            ann.edges[key] = EdgeNote(grad=GradInfo(dtype=info.dtype, shape=info.shape))
