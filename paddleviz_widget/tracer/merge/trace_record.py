"""The trace record as one annotation source: what one traced backward said about the walked
graph (its VLOG log, Paddle's dump, its call sites and to_static programs), as a layer of its
own; its statistics are stats.stats_layer. collect.py merges the layers (annotate.merge_layer),
newest backward first."""

from __future__ import annotations

from collections.abc import Callable

from ...graph.model import ParamInfo
from ..capture.session import BackwardRecord
from ..parse.log_parser import ParsedLog
from ..read.walk import WalkResult, next_ptrs
from .annotate import Annotations, EdgeNote
from .copy_alignment import align_copied_dump, rekey_copied_runs
from .log_annotations import UNMATCHED_DUMP_NOTICE, add_note, from_log, note_mismatches, placed_dump
from .replay_annotations import UNMATCHED_NOTICE

SILENT_NOTICE = (
    "{n} edge(s) carried no gradient in the traced backward (Paddle's dump names none there: "
    "e.g. a PyLayer's backward returned None for that input)."
)
COPIES_WITHOUT_DUMP_NOTICE = (
    "paddle.grad ran on copies of the GradNodes, which only Paddle >= 3.3's backward dump pairs "
    "with this graph: call backward() inside trace() for gradient shapes, or upgrade Paddle."
)


def trace_record_layer(
    record: BackwardRecord,
    walk: WalkResult,
    nexts: Callable[[], dict[int, list[int | None]]],
    params: dict[int, ParamInfo],
) -> Annotations:
    """What one traced backward said about this graph. A ``paddle.grad`` ran on copies of the
    nodes: those are paired with ours by structure (copy_alignment), never by name alone, using
    the parameters' shapes (``params``). ``nexts``: gives the graph's next_ptrs, asked only
    when a log or dump is read (a watched capture's hooks stand in for both)."""
    layer = Annotations(src={"call_site": "c"})  # Paddle's stacks, from the dump's call-stack file
    captured = record.captured
    log, dump = captured.log, captured.dump
    dump_edges: dict[tuple[int, int], EdgeNote] = {}
    unplaced = 0  # dump edges of this graph's nodes that are not its next_functions
    if record.copies:
        log, dump_edges = _copied(record, params, layer)
    elif dump is not None:
        dump_edges, unplaced = placed_dump(dump, nexts(), "d")
        if captured.dump_read_whole and not unplaced:
            layer.silent = _silent(walk, dump_edges)
            if layer.silent:
                add_note(layer, SILENT_NOTICE.format(n=len(layer.silent)))
    if log is not None and log.runs:
        edges, slots = from_log(log, nexts())
        layer.add_edges(edges, "l")
        layer.slots.update(slots)
        layer.sources.append("vlog")
    if dump_edges:
        layer.add_edges(dump_edges, "d")
        layer.sources.append("dump")
    for line in captured.notes:  # the log or dump was only partly understood
        add_note(layer, line)
    if log is not None:  # (it says nothing of a missing log)
        note_mismatches(layer, log, None, nexts())
    if unplaced:
        add_note(layer, UNMATCHED_DUMP_NOTICE.format(n=unplaced))
    if not record.copies:
        layer.call_sites.update(captured.call_sites)
    layer.programs.update(record.programs)
    if captured.problems:  # e.g. this Paddle cannot switch VLOG on; last, so notes don't
        layer.notice = captured.problems[0]  # defer to it here, only to the merged notice
    return layer


def _silent(walk: WalkResult, named: dict[tuple[int, int], EdgeNote]) -> set[tuple[int, int]]:
    """The graph's edges a whole dump gives no gradient: Paddle sent none on them. ``named``
    holds only the graph's edges (placed_dump): as many as it has, none is silent."""
    if len(named) == len(walk.edges):
        return set()
    return set(walk.edge_keys).difference(named)


def _copied(
    record: BackwardRecord, params: dict[int, ParamInfo], layer: Annotations
) -> tuple[ParsedLog | None, dict[tuple[int, int], EdgeNote]]:
    dump = record.captured.dump
    if dump is None and record.targets is not None:
        add_note(layer, COPIES_WITHOUT_DUMP_NOTICE)
    if dump is None or record.targets is None:
        return None, {}
    walk = record.walk()
    if walk is None:  # its roots are gone: nothing left to pair the copies with
        return None, {}
    nexts = next_ptrs(walk)
    names = {n.ptr: n.name for n in walk.nodes}
    targeted = {e.target for e in walk.edges}
    roots = [walk.nodes[i].ptr for i in walk.root_indices if i not in targeted]
    shapes = {ptr: info.shape for ptr, info in params.items()}
    aligned = align_copied_dump(dump, roots, nexts, names, record.targets, shapes)
    if aligned.disagreed:
        add_note(layer, UNMATCHED_NOTICE.format(n=aligned.disagreed))
    log = record.captured.log
    return (rekey_copied_runs(log, aligned.nodes) if log is not None else None), aligned.edges
