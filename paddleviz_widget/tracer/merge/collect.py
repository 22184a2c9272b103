"""The annotation step as a pipeline: find who saw the walked graph (the trace() session, its
backward records, the model), then each source gives its own layer of annotations, merged into
one Annotations by annotate.merge_layer in precedence order (what is known first stays):
parameter names, trace records (trace_record.py: log, dump, call sites, programs; then what
that record's statistics hooks saw, hook_grads.py, and its statistics, stats.py), layer
scopes, else groups from parameter ownership (param_groups.py), PyLayer info, a replayed
backward if edges are still bare (replay_annotations.py), parameter-shaped edges; last, the
one-line notice for what stays bare. DEVELOP.md has the table."""

from __future__ import annotations

from functools import cached_property
from itertools import compress
from operator import countOf, itemgetter
from typing import Any

from ...graph.model import CallSite, GradInfo
from ..capture.backward_capture import replay_dump_available
from ..capture.kept_traces import LOST, LOST_NOTICE
from ..capture.layer_scopes import LayerScopes
from ..capture.nesting import nested_with
from ..capture.replay import Leaves, discover_model, find_leaves
from ..capture.scope_union import union_scopes
from ..capture.session import RECENT_SESSIONS, SLOT_LOG_MAX_NODES, BackwardRecord, TraceSession
from ..read.other_models import other_models_params
from ..read.params import FROZEN_REASON, accumulation_ptr, param_infos_by_ptr, unreached_params
from ..read.program import maybe_program_node, program_closed_notice, unread_program_nodes
from ..read.pylayer_info import PyLayerInfo, describe_pylayers, recompute_notice
from ..read.replay_safety import is_pylayer
from ..read.walk import ACCUMULATION_NODE, WalkResult, next_ptrs
from .annotate import Annotations, EdgeNote, merge_layer
from .bare_notice import bare_notice
from .hook_grads import hooks_layer
from .numbered_names import numbered_names_notice
from .param_groups import ensure_layer_group, param_groups_layer
from .replay_annotations import (
    UNNAMED_LEAVES_NOTICE,
    bare_leaf_edges,
    replay_into,
)
from .scope_agreement import agree_enough, name_agreement
from .stats import stats_layer
from .trace_record import trace_record_layer

NO_TRACE_NOTICE = (
    "Gradient shapes need Paddle's backward log: wrap forward and backward in "
    "`with paddleviz_widget.trace(model):`, or build the graph before calling backward()."
)
_GRAD, _TARGET = itemgetter(0), itemgetter(1)  # EdgeNote.grad, WalkedEdge.target


class _Graph:
    """The walked graph in the shapes the annotation sources want."""

    def __init__(self, walk: WalkResult) -> None:
        self.walk = walk
        self.names = walk.names
        self.roots = [walk.nodes[i] for i in walk.root_indices]

    @cached_property
    def nexts(self) -> dict[int, list[int | None]]:
        """Each node's next_functions as pointers: for a log, a dump or a replay only."""
        return next_ptrs(self.walk)

    def edge_count(self) -> int:
        return len(self.walk.edges)


def _scopes_match(scopes: LayerScopes | None, graph: _Graph, trusted: bool) -> bool:
    return scopes is not None and agree_enough(name_agreement(scopes, graph.names), trusted)


def _scopes_layer(
    scopes: LayerScopes | None, graph: _Graph, trusted: bool, known_sites: dict[int, CallSite]
) -> Annotations:
    """Layer groups from the session's forward, only for nodes the session proved its own
    (TraceSession.sighting). ``trusted``: a backward record vouches for this graph; otherwise
    most op nodes the session knows must also agree on their names."""
    layer = Annotations()
    if scopes is None:
        return layer
    found = name_agreement(scopes, graph.names)
    if not agree_enough(found, trusted):
        return layer
    keep = graph.names.keys() - set(found.differ) if found.differ else graph.names.keys()
    # node_sites is read below only for nodes it keeps, node_names not at all: left whole
    mine = scopes.restricted_to(keep, node_tables=False)  # no other name
    layer.groups = mine.groups
    layer.group_of_ptr = dict(mine.group_of_ptr)
    layer.group_sites = dict(mine.call_sites)
    layer.src = {"group": "t", "call_site": "w"}
    node_sites, group_sites, names_of = mine.node_sites.get, mine.call_sites.get, graph.names.get
    for ptr, gid in mine.group_of_ptr.items():  # ops Paddle gave no stack: where the layer ran
        if ptr in known_sites:  # it has one already (merge_layer would keep that one)
            continue
        site = node_sites(ptr) or group_sites(gid)
        if site is not None and names_of(ptr) != ACCUMULATION_NODE:
            layer.call_sites.setdefault(ptr, site)
    layer.sources.append("layers")
    return layer


def _params_layer(
    model: Any, params: Any, session: TraceSession | None, ptrs: dict[int, int | None],
    read: list[list[tuple[str, Any]]],
) -> Annotations:  # fmt: skip
    """Parameter names: the model's or the ``params`` given, then those a dropped trace kept
    when its model was gone (kept_traces). ``ptrs``, ``read``: filled as param_infos_by_ptr
    does."""
    layer = Annotations(src={"param": "m"})
    named = (
        param_infos_by_ptr(model=model, params=params, ptrs=ptrs, read=read)
        if (model or params)
        else {}
    )
    layer.params = named
    kept = layer.node_src.setdefault("param", {})
    for ptr, info in session.kept_params.items() if session is not None else ():
        if ptr not in layer.params:
            layer.params[ptr], kept[ptr] = info, "k"
    return layer


def _other_models_layer(unnamed: set[int], model: Any, known: Annotations) -> Annotations:
    """The parameters of a second model in the graph (read/other_models.py)."""
    layer = Annotations(src={"param": "m"})
    named, by_variable = other_models_params(
        unnamed, model, (i.name for i in known.params.values())
    )
    layer.params = named
    codes = layer.node_src.setdefault("param", {})
    for ptr in by_variable:
        codes[ptr] = "v"
    return layer


def _traced(
    graph: _Graph,
) -> tuple[TraceSession | None, list[BackwardRecord], LayerScopes | None]:
    """The newest trace() session that saw this graph, its backward runs over it, and the
    layer groups it can vouch for."""
    roots = {root.ptr for root in graph.roots}
    for session in RECENT_SESSIONS.newest_first():
        records, scopes = session.sighting(roots, graph.names)
        if records or _scopes_match(scopes, graph, trusted=False):
            if nested_with(session):
                return _nested(session, records, scopes, roots, graph)
            return session, records, scopes
    return None, [], None


def _nested(
    found: TraceSession, records: list[BackwardRecord], scopes: LayerScopes | None,
    roots: set[int], graph: _Graph,
) -> tuple[TraceSession, list[BackwardRecord], LayerScopes | None]:  # fmt: skip
    """With trace() sessions nested in or around the one found: the one whose records saw
    the backward (the innermost captures it: nesting.py), and the layer groups of every one
    of them that saw this graph, outermost first (scope_union.py)."""
    parts = []
    for session in nested_with(found):
        if session is found:
            part = scopes
        else:
            seen, part = session.sighting(roots, graph.names)
            if not (seen or _scopes_match(part, graph, trusted=False)):
                continue
            if seen and not records:
                found, records = session, seen
        if part is not None:
            parts.append(part)
    return found, records, union_scopes(parts) if parts else None


def collect_annotations(
    walk: WalkResult, roots: list[Any], *, model: Any = None, params: Any = None,
    replay: bool = True, named_params: list[tuple[str, Any]] | None = None,
) -> Annotations:  # fmt: skip
    """``named_params``: ``model.named_parameters()`` as the caller read it just now (of the
    ``model`` given here, not of one found below), not read again."""
    # The model's named_parameters(), read once (given: of ``model`` as given).
    read: list[list[tuple[str, Any]]] = (
        [named_params] if named_params is not None and model is not None else []
    )
    graph = _Graph(walk)
    ann = Annotations()
    session, records, scopes = _traced(graph)
    lost = LOST.why({root.ptr for root in graph.roots}) if session is None else None
    if lost is not None:  # said first; nothing below may pass this graph off as untraced
        ann.trace_lost = lost
        ann.notice = LOST_NOTICE.format(why=lost)
    if session is not None and model is None:
        model = session.current_model()
    accumulation = set(walk.accumulation)
    if model is None and params is None:
        model = discover_model(accumulation)
    # The sources, in precedence order: each gives its own layer, merge_layer (annotate.py)
    # adds it to what is known; what is known first stays (GRAD_SOURCES for edges).
    ptrs: dict[int, int | None] = {}  # id(parameter) -> its accumulation node, read once
    merge_layer(ann, _params_layer(model, params, session, ptrs, read))
    if model is not None and params is None:
        merge_layer(ann, _other_models_layer(accumulation - ann.params.keys(), model, ann))
    for record in reversed(records):  # newest backward first; Paddle's stacks before layers'
        merge_layer(ann, trace_record_layer(record, walk, lambda: graph.nexts, ann.params))
        if record.stats is not None and not record.copies:
            captured = record.captured
            merge_layer(ann, hooks_layer(record.stats, walk, instead_of_dump=captured.hooks_instead,
                                         guess=not captured.dump_read_whole))  # fmt: skip
        if record.stats is not None:
            asked = (record.targets or frozenset()) if record.copies else None
            merge_layer(ann, stats_layer(record.stats, walk, asked))
    # The graph's distinct GradNode names (a few dozen of ~10k nodes): PyLayer and program
    # nodes looked for among them first, each of those scans of every node only if one is there
    kinds = set(walk.names.values())
    pylayers = _pylayers(walk, model, records) if any(map(is_pylayer, kinds)) else []
    if session is not None and session.history is not None:
        _add_steps(ann, session.history, records)
        if model is not None:
            ann.unreached = _unreached(model, accumulation, ptrs, pylayers, read)
    if session is not None:
        merge_layer(ann, _scopes_layer(scopes, graph, bool(records), ann.call_sites))
    if not ann.groups and ann.params:  # no trace() saw the forward: groups from ownership
        merge_layer(ann, param_groups_layer(walk, ann.params, model))
    merge_layer(ann, _pylayers_layer(ann, pylayers, model, accumulation))

    notice = None
    # Paddle < 3.3: no replay can be paired with the graph, and a traced backward()'s log named
    # every edge Paddle sent a gradient on: an edge still bare carried none (a PyLayer's None),
    # which the replay's advice (run backward() inside trace()) would say wrong. (paddle.grad's
    # log, of copies of the nodes, annotates nothing there.)
    logged = not replay_dump_available() and any(
        r.captured.log is not None and not r.copies for r in records
    )
    # Edges still bare: counted once more at the end only if some were now (merges only add
    # gradients; ~1.5 ms a count on a 10k-GradNode capture)
    bare = _bare(ann, graph) if replay and not logged else None
    if bare is not None and bare > 0:
        traced = session is not None
        leaves = Leaves([], {}, {})
        # Naming leaves reads the callers' frame locals (Python keeps that snapshot, and the
        # tensors in it, while a frame runs): not done when no replay can follow (Paddle < 3.3)
        # and a trace() is the source.
        if not traced or replay_dump_available():
            leaves = find_leaves(accumulation, model=model, params=params)
        named = Annotations(params=dict(leaves.named), src={"param": "v"})  # the user's "x"
        merge_layer(ann, named)
        log = len(walk.nodes) <= SLOT_LOG_MAX_NODES  # as trace(slots=None) decides
        replayed = Annotations()  # its notice is used below only if none is known by then
        notice = replay_into(
            replayed, walk, graph.nexts, roots, leaves, log=log, traced=traced
        ).notice
        merge_layer(ann, replayed)
    merge_layer(ann, _param_shaped_layer(ann, graph))
    _keep_empty_params_unflagged(ann)
    numbered = numbered_names_notice(walk.names.values())
    if numbered is not None:
        ann.notes.append(numbered)
    closed = (
        unread_program_nodes(walk.nodes, ann.programs)
        if any(map(maybe_program_node, kinds))
        else []
    )
    if closed:
        ann.notes.append(program_closed_notice(closed[0].name, len(closed)))
    if ann.programs and model is not None:
        ann.static_names = {p.name: n for n, p in model.named_parameters()}
        ann.layer_types = {n: type(s).__name__ for n, s in model.named_sublayers()}
    if (bare is None or bare > 0) and _bare(ann, graph) > 0 and ann.notice is None:
        unnamed = bare_leaf_edges(ann, walk, accumulation)
        if notice is None and unnamed:
            notice = UNNAMED_LEAVES_NOTICE.format(n=unnamed)
        if notice is None and session is not None:
            notice = bare_notice(_bare(ann, graph), ann, walk, logged=logged)
        ann.notice = notice or NO_TRACE_NOTICE
    return ann


def _pylayers(walk: WalkResult, model: Any, records: list[BackwardRecord]) -> list[PyLayerInfo]:
    """Described now, or, once a traced backward has released the contexts, as its record
    described them before it ran."""
    live = describe_pylayers(walk, model)
    recorded = {i.ptr: i for r in records for i in r.pylayers if i.layer is not None}
    return [recorded.get(i.ptr, i) if i.layer is None else i for i in live]


def _keep_empty_params_unflagged(ann: Annotations) -> None:
    """A parameter with no elements (shape [0, 3]) is sent an uninitialized gradient, which
    the statistics hooks cannot tell from none sent: it is not "no gradient reached it" (its
    .grad is a [0, 3] tensor; problems() listed it, the page badged it "∅ grad")."""
    for ptr in [p for p, status in ann.grad_status.items() if status == "none"]:
        info = ann.params.get(ptr)
        if info is not None and info.shape is not None and 0 in info.shape:
            del ann.grad_status[ptr]


def _unreached(
    model: Any, accumulation: set[int], ptrs: dict[int, int | None], pylayers: list[PyLayerInfo],
    read: list[list[tuple[str, Any]]],
) -> list[dict[str, Any]]:  # fmt: skip
    """meta.unreached_params. A parameter a recompute node hides is reached, by that node's own
    backward; a RecomputeFunction node whose context is gone hides parameters nobody can name
    any more: then only the frozen ones are listed (the recompute notice counts the rest)."""
    hidden = {p.name for info in pylayers for p in info.hidden}
    unsure = any(i.cls == "RecomputeFunction" and i.layer is None for i in pylayers)
    out = []
    for name, why, shape in unreached_params(model, accumulation, ptrs, read[0] if read else None):
        frozen = why is FROZEN_REASON
        if frozen or not (unsure or name in hidden):
            entry: dict[str, Any] = {"name": name, "reason": why}
            if frozen:
                entry["frozen"] = True
            if shape is not None:  # what the per-layer counts add for it (graph/summary.py)
                entry["shape"] = shape
            out.append(entry)
    return out


def _pylayers_layer(
    known: Annotations, infos: list[PyLayerInfo], model: Any, accumulation: set[int]
) -> Annotations:
    """A recompute node goes into the group of the layer it recomputes (added to the known
    groups if no node put it there yet), lists the parameters it hides, and the widget says in
    a line what recompute hides."""
    layer = Annotations(groups=known.groups, src={"group": "r"})
    for info in infos:
        entry: dict[str, Any] = {"ptr": info.ptr, "class": info.cls}
        if info.layer is not None:
            entry.update(layer=info.layer, layer_type=info.layer_type)
            gid = ensure_layer_group(layer, model, info.layer)
            if gid is not None:
                layer.regroup[info.ptr] = gid
        if info.hidden:
            entry["hidden_params"] = [
                {"name": p.name, "shape": list(p.shape or ()), "dtype": p.dtype}
                for p in info.hidden
            ]
        layer.pylayers.append(entry)
    unseen = None
    if model is not None and infos and not any(i.hidden for i in infos):
        trainable = (p for p in model.parameters() if not p.stop_gradient)
        unseen = sum(1 for p in trainable if accumulation_ptr(p) not in accumulation)
    note = recompute_notice(infos, unseen)
    if note is not None:
        layer.notes.append(note)
    return layer


def _add_steps(ann: Annotations, history: Any, records: list[BackwardRecord]) -> None:
    """Earlier steps' statistics, matched through the newest backward that saw this graph:
    its nodes' positions are what the history is kept by."""
    newest = records[-1] if records else None
    if newest is None or newest.positions is None:
        return
    ann.steps = history.matching(newest.signature)
    ann.step_positions = newest.positions


_NONE_ID = id(None)


def _bare(ann: Annotations, graph: _Graph) -> int:
    # Counted in C, by identity: comparing a GradInfo with None runs its dataclass __eq__
    # (~1 us in Python, twice per edge of a capture step)
    known = len(ann.edges) - countOf(map(id, map(_GRAD, ann.edges.values())), _NONE_ID)
    if ann.silent:  # no gradient was sent there: nothing to find
        edges = ann.edges
        known += sum(1 for k in ann.silent if (n := edges.get(k)) is None or n.grad is None)
    return graph.edge_count() - known


def _param_shaped_layer(known: Annotations, graph: _Graph) -> Annotations:
    """A parameter's gradient has the parameter's dtype and shape: known without any log
    (for the edges nothing else said anything about)."""
    layer = Annotations()
    ptrs, edges, walked = graph.walk.ptrs, known.edges, graph.walk.edges
    if len(edges) >= len(walked) and all(map(edges.__contains__, graph.walk.edge_keys)):
        return layer  # every edge has a note already (the hooks': a watched run's capture)
    shaped = {p: info for p, info in known.params.items() if info.shape is not None}
    # The edges into a parameter (1 in 8 on a Llama), picked out in C before the loop.
    into = set(compress(range(len(ptrs)), map(shaped.__contains__, ptrs)))
    for source, target, slot in compress(walked, map(into.__contains__, map(_TARGET, walked))):
        info = shaped[ptrs[target]]
        if (key := (ptrs[source], slot)) not in edges:
            layer.edges[key] = EdgeNote(GradInfo(dtype=info.dtype, shape=info.shape), src="p")
    return layer
