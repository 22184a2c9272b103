"""Paddle tensor(s) -> Graph: the tracer's entry point."""

from __future__ import annotations

from typing import Any

from ..gc_pause import gc_paused
from ..graph.codec import encode_rows
from ..graph.model import Graph
from ..graph.parts import GraphParts, GraphRows, edge_column, parts_of, row_views
from ..graph.problems import find_problems
from .capture.recorded_walk import recorded_walk
from .merge.capture_columns import columns_of, rows_of
from .merge.collect import NO_TRACE_NOTICE, collect_annotations
from .merge.graph_rows import annotated_rows
from .merge.program_ops import with_program_ops
from .read.inputs import split_roots
from .read.tensor_info import tensor_grad_info
from .read.walk import WalkResult, walk_backward_graph

# Above this many GradNodes the graph is not replayed for edge gradients: Paddle's own
# paddle.grad + dump grows faster than the graph (a 100k-node chain: 7-11 s, against
# 1.4 s for its plain backward; benchmarks/RESULTS.md), and trace() gets them for free.
REPLAY_MAX_NODES = 20_000
TOO_BIG_NOTICE = (
    "Gradient shapes need Paddle's backward log, and replaying the backward of {n:,} GradNodes "
    "(over {limit:,}) takes Paddle too long: wrap forward and backward in "
    "`with paddleviz_widget.trace(model):`."
)

LEFT_OUT_NOTICE = "Left out of the graph, not being tensors: {} of what was passed."


def trace_graph(y: Any, *, model: Any = None, params: Any = None, replay: bool = True) -> Graph:
    """Walk the backward graph of ``y`` (a Tensor, or a list/tuple/dict of Tensors) and
    annotate it with everything known: the trace() that saw it, parameter names, and (if
    ``replay`` and the graph is still alive) one side-effect-free instrumented backward."""

    with gc_paused():
        traced = _trace_graph(y, model=model, params=params, replay=replay)
        assert not isinstance(traced, dict)  # (columns only when asked for)
        return traced if isinstance(traced, Graph) else Graph(*parts_of(traced))


def _trace_graph(
    y: Any, *, model: Any, params: Any, replay: bool, walk: WalkResult | None = None,
    problems: bool = True, named_params: list[tuple[str, Any]] | None = None,
    columns: bool = False,
) -> Graph | GraphRows | dict[str, Any]:  # fmt: skip
    """The traced graph: as rows (what build_graph encodes, no object per node and edge), or
    as a Graph where a step reads Node and Edge objects (to_static programs' ops, the problem
    rules of trace(stats=True)). ``problems`` False: a rows graph leaves meta.problems out
    (a watched capture: the run log's reader adds them, runs/capture_read.py);
    ``named_params``: ``model.named_parameters()`` as the caller read it just now;
    ``columns``: what the rows are made from, as a watched run's capture file holds it
    (merge/capture_columns.py), where those columns can stand for the document."""
    import paddle

    roots, left_out = split_roots(y)
    if walk is None:
        grad_fns = [r.grad_fn for r in roots]
        walk = recorded_walk(grad_fns) or walk_backward_graph(grad_fns)
    root_tensors = {idx: tensor_grad_info(r.tensor) for idx, r in zip(walk.root_indices, roots)}
    big = len(walk.nodes) > REPLAY_MAX_NODES
    ann = collect_annotations(
        walk,
        [r.tensor for r in roots],
        model=model,
        params=params,
        replay=replay and not big,
        named_params=named_params,
    )
    if replay and big and ann.notice == NO_TRACE_NOTICE:
        ann.notice = TOO_BIG_NOTICE.format(n=len(walk.nodes), limit=REPLAY_MAX_NODES)
    if left_out:
        ann.notes.append(LEFT_OUT_NOTICE.format(", ".join(left_out)))
    about = {
        "paddle_version": paddle.__version__,
        "outputs": [
            {"label": r.label, "node": f"n{idx}"} for idx, r in zip(walk.root_indices, roots)
        ],
    }
    if columns and (kept := columns_of(walk, ann, root_tensors, about)) is not None:
        return kept
    if not ann.programs:  # rows: the problem rules read them as attribute views, not objects
        rows = rows_of(walk, ann, root_tensors, about)
        meta = rows.meta
        if problems and ann.stats and any(s is not None for s in edge_column(rows, "stats")):
            meta["problems"] = [p.to_dict() for p in find_problems(row_views(rows, meta))]
        return rows._replace(meta=meta)
    graph = Graph(*parts_of(annotated_rows(walk, ann, root_tensors)))
    # to_static: each program node opens into its program's backward ops
    index_of = {n.ptr: n.index for n in walk.nodes}
    programs = {index_of[p]: r for p, r in ann.programs.items() if p in index_of}
    graph = with_program_ops(graph, walk, programs, ann.static_names, ann.layer_types)
    meta = {**graph.meta, **about}
    if any(e.stats is not None for e in graph.edges):  # trace(stats=True): what problems() says
        parts = GraphParts(graph.nodes, graph.edges, graph.groups, meta)
        meta["problems"] = [p.to_dict() for p in find_problems(parts)]
    return Graph(nodes=graph.nodes, edges=graph.edges, groups=graph.groups, meta=meta)


def _encoded(traced: Graph | GraphRows | dict[str, Any]) -> dict[str, Any]:
    if isinstance(traced, dict):  # capture columns: encoded by the run log's reader
        return traced
    return traced.to_dict() if isinstance(traced, Graph) else encode_rows(traced)


def build_graph(y: Any, *, model: Any = None, params: Any = None) -> dict[str, Any]:
    """The backward graph of ``y`` as a JSON-serialisable dict (see graph.schema.json).

    ``model`` (an nn.Layer) or ``params`` (a name -> parameter mapping, as torchviz takes)
    name the parameters' accumulation nodes.
    """
    # One GC pause around building *and* encoding: the rows are gone again before the
    # collector runs, so its first pass afterwards only visits the JSON-ready dicts.
    with gc_paused():
        return _encoded(_trace_graph(y, model=model, params=params, replay=True))


def captured_graph(
    y: Any,
    walk: WalkResult,
    *,
    model: Any = None,
    named_params: list[tuple[str, Any]] | None = None,
    columns: bool = False,
) -> dict[str, Any]:
    """``build_graph(y, model=model)`` for a watched run's full capture, whose backward just
    walked the graph of ``y`` (one tensor): that walk is used, not made again. Its problems
    are left to the run log's reader (meta.problems is a function of the document alone:
    ~60 ms of a 10k-GradNode capture step moved out of training; runs/capture_read.py).
    ``named_params``: ``model.named_parameters()``, if the caller has just read it (the
    watch's check for unwatched parameters, in the same step after the same backward): not
    read again. ``columns``: what the document is made from instead, where that can stand for
    it (merge/capture_columns.py: the run log's reader encodes it; ~40-60 ms of a 10k-GradNode
    capture step moved out of training)."""
    with gc_paused():
        traced = _trace_graph(
            y,
            model=model,
            params=None,
            replay=True,
            walk=walk,
            problems=False,
            named_params=named_params,
            columns=columns,
        )
        return _encoded(traced)
