"""Paddle tensor(s) -> Graph: the tracer's entry point."""

from __future__ import annotations

from typing import Any

from ..gc_pause import gc_paused
from ..graph.model import Graph
from ..graph.parts import GraphParts
from ..graph.problems import find_problems
from .merge.annotate import annotated_graph
from .merge.collect import NO_TRACE_NOTICE, collect_annotations
from .merge.program_ops import with_program_ops
from .read.inputs import normalize_roots
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


def trace_graph(y: Any, *, model: Any = None, params: Any = None, replay: bool = True) -> Graph:
    """Walk the backward graph of ``y`` (a Tensor, or a list/tuple/dict of Tensors) and
    annotate it with everything known: the trace() that saw it, parameter names, and (if
    ``replay`` and the graph is still alive) one side-effect-free instrumented backward."""

    with gc_paused():
        return _trace_graph(y, model=model, params=params, replay=replay)


def _trace_graph(
    y: Any, *, model: Any, params: Any, replay: bool, walk: WalkResult | None = None
) -> Graph:
    import paddle

    roots = normalize_roots(y)
    if walk is None:
        walk = walk_backward_graph([r.grad_fn for r in roots])
    root_tensors = {idx: tensor_grad_info(r.tensor) for idx, r in zip(walk.root_indices, roots)}
    big = len(walk.nodes) > REPLAY_MAX_NODES
    ann = collect_annotations(
        walk, [r.tensor for r in roots], model=model, params=params, replay=replay and not big
    )
    if replay and big and ann.notice == NO_TRACE_NOTICE:
        ann.notice = TOO_BIG_NOTICE.format(n=len(walk.nodes), limit=REPLAY_MAX_NODES)
    graph = annotated_graph(walk, ann, root_tensors)
    if ann.programs:  # to_static: each program node opens into its program's backward ops
        index_of = {n.ptr: n.index for n in walk.nodes}
        programs = {index_of[p]: r for p, r in ann.programs.items() if p in index_of}
        graph = with_program_ops(graph, walk, programs, ann.static_names, ann.layer_types)
    meta = {
        **graph.meta,
        "paddle_version": paddle.__version__,
        "outputs": [
            {"label": r.label, "node": f"n{idx}"} for idx, r in zip(walk.root_indices, roots)
        ],
    }
    if any(e.stats is not None for e in graph.edges):  # trace(stats=True): what problems() says
        parts = GraphParts(graph.nodes, graph.edges, graph.groups, meta)
        meta["problems"] = [p.to_dict() for p in find_problems(parts)]
    return Graph(nodes=graph.nodes, edges=graph.edges, groups=graph.groups, meta=meta)


def build_graph(y: Any, *, model: Any = None, params: Any = None) -> dict[str, Any]:
    """The backward graph of ``y`` as a JSON-serialisable dict (see graph.schema.json).

    ``model`` (an nn.Layer) or ``params`` (a name -> parameter mapping, as torchviz takes)
    name the parameters' accumulation nodes.
    """
    # One GC pause around building *and* encoding: the Graph objects are gone again before the
    # collector runs, so its first pass afterwards only visits the JSON-ready dicts.
    with gc_paused():
        return _trace_graph(y, model=model, params=params, replay=True).to_dict()


def captured_graph(y: Any, walk: WalkResult, *, model: Any = None) -> dict[str, Any]:
    """``build_graph(y, model=model)`` for a watched run's full capture, whose backward just
    walked the graph of ``y`` (one tensor): that walk is used, not made again."""
    with gc_paused():
        return _trace_graph(y, model=model, params=None, replay=True, walk=walk).to_dict()
