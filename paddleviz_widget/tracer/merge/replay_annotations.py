"""Annotate a live graph that no ``trace()`` saw by replaying its backward (replay.py), and put
what the copies reported on our edges by structure (copy_alignment.py).

Which edges stay bare, and why, is counted here so that the notice names the real cause.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..capture.backward_capture import (
    CapturedBackward,
    paddle_version_text,
    replay_dump_available,
)
from ..capture.replay import Leaves, graph_was_freed, replay_backward
from ..capture.vlog import get_vlog_level, switched_at_run_time
from ..parse.log_parser import REQUIRED_VLOG_LEVEL
from ..read.replay_safety import replay_refusal
from ..read.walk import WalkResult
from .annotate import Annotations
from .copy_alignment import align_copied_dump, rekey_copied_runs
from .log_annotations import add_note, from_log

FREED_NOTICE = (
    "backward() has already freed this graph, so only parameter gradients have shapes: wrap "
    "forward and backward in `with paddleviz_widget.trace(model):`, or build the graph before "
    "backward() (or after backward(retain_graph=True))."
)
# The forward was traced: the advice is never to use trace() (the user did), but what left the
# graph without a record: a backward run after the `with` block, or one that raised (Paddle's
# FLAGS_check_nan_inf stopping it at an Inf gradient records nothing).
TRACED_FREED_NOTICE = (
    "backward() has already freed this graph and no backward of it finished inside the trace() "
    "that saw its forward (it ran after the `with` block, or it raised an error), so only "
    "parameter gradients have shapes: build the graph before backward(), or run the backward "
    "inside the block."
)
UNNAMED_LEAVES_NOTICE = (
    "{n} edge(s) into leaf tensors that are not parameters (made inside forward, e.g. a buffer "
    "filled in place) have no gradient shape: the replay differentiates only tensors it can "
    "name (parameters, your variables, params=); wrap forward and backward in "
    "`with paddleviz_widget.trace(model):` to see them."
)
UNMATCHED_NOTICE = (
    "{n} GradNode(s) of Paddle's replay could not be matched to this graph by structure; "
    "their edges are left without gradient shapes."
)


def no_dump_notice(*, traced: bool) -> str:
    """Paddle < 3.3: no dump, so no replay can be paired with the graph; only a backward run
    inside trace() with VLOG 6 annotates the edges (switched on at run time, or, where it
    cannot be, set through GLOG_v before import)."""
    version = paddle_version_text()
    if traced:
        text = (
            f"paddle {version} has no backward dump: gradient shapes come only from the log of "
            "a backward() run inside this trace()'s `with` block"
        )
    else:
        text = (
            f"paddle {version} cannot replay the backward for gradient shapes (it has no "
            "backward dump): run forward and backward inside "
            "`with paddleviz_widget.trace(model):`"
        )
    if get_vlog_level() < REQUIRED_VLOG_LEVEL and not switched_at_run_time():
        text += f", with GLOG_v={REQUIRED_VLOG_LEVEL} set before `import paddle`"
    return text + "; or upgrade to paddlepaddle>=3.3."


@dataclass(frozen=True)
class ReplayOutcome:
    notice: str | None = None
    replayed: bool = False


def _top_roots(walk: WalkResult) -> list[int]:
    """Walk indices of the roots no other node hands a gradient to (inner roots ride along)."""
    targeted = {e.target for e in walk.edges}
    return list(dict.fromkeys(i for i in walk.root_indices if i not in targeted))


def _batches(walk: WalkResult, roots: Sequence[Any]) -> list[list[tuple[int, Any]]]:
    """Split the top roots so that no two in one replay share a GradNode name: copied roots
    are told apart by name only. Each batch: (root ptr, root tensor) pairs."""
    tensor_of = dict(zip(walk.root_indices, roots))
    batches: list[dict[str, tuple[int, Any]]] = []
    for index in _top_roots(walk):
        node = walk.nodes[index]
        batch = next((b for b in batches if node.name not in b), None)
        if batch is None:
            batch = {}
            batches.append(batch)
        batch[node.name] = (node.ptr, tensor_of[index])
    return [list(b.values()) for b in batches]


def replay_into(
    ann: Annotations,
    walk: WalkResult,
    nexts: dict[int, list[int | None]],
    roots: Sequence[Any],
    leaves: Leaves,
    *,
    log: bool,
    traced: bool = False,
) -> ReplayOutcome:
    """Replay the backward of ``roots`` for ``leaves`` and add what it says to ``ann``.
    ``traced``: a trace() saw the forward (the notices' advice differs)."""
    refusal = replay_refusal((n.name for n in walk.nodes), traced=traced)
    if refusal is not None:
        return ReplayOutcome(notice=refusal)
    if not replay_dump_available():  # Paddle < 3.3: a replay could not be paired with ours
        return ReplayOutcome(notice=no_dump_notice(traced=traced))
    if not leaves.tensors:
        return ReplayOutcome()
    names = {n.ptr: n.name for n in walk.nodes}
    disagreed = 0
    for batch in _batches(walk, roots):
        try:
            captured = replay_backward([t for _, t in batch], leaves.tensors, log=log)
        except (RuntimeError, ValueError, OSError, SystemError) as exc:  # EnforceNotMet kinds
            if graph_was_freed(exc):
                return ReplayOutcome(notice=TRACED_FREED_NOTICE if traced else FREED_NOTICE)
            return ReplayOutcome(notice=f"Could not replay the backward for annotations: {exc}")
        disagreed += _add_replayed(ann, captured, [p for p, _ in batch], nexts, names, leaves)
    if captured.problems and ann.notice is None:  # e.g. this Paddle cannot switch VLOG on
        return ReplayOutcome(notice=captured.problems[0], replayed=True)
    notice = UNMATCHED_NOTICE.format(n=disagreed) if disagreed else None
    return ReplayOutcome(notice=notice, replayed=True)


def _add_replayed(
    ann: Annotations,
    captured: CapturedBackward,
    root_ptrs: list[int],
    nexts: dict[int, list[int | None]],
    names: dict[int, str],
    leaves: Leaves,
) -> int:
    if captured.dump is None:  # nothing to pair copies by: a log alone is not trusted
        return 0
    for line in captured.notes:
        add_note(ann, line)
    aligned = align_copied_dump(
        captured.dump, root_ptrs, nexts, names, leaves.ptrs.keys(), leaves.ptrs
    )
    if captured.log is not None and captured.log.runs:
        edges, slots = from_log(rekey_copied_runs(captured.log, aligned.nodes), nexts)
        ann.add_edges(edges, "L")
        for ptr, node_slots in slots.items():
            ann.slots.setdefault(ptr, node_slots)
        ann.sources.append("vlog")
    if aligned.edges:
        ann.add_edges(aligned.edges, "D")
        ann.sources.append("dump")
    return aligned.disagreed


def bare_leaf_edges(ann: Annotations, walk: WalkResult, accumulation: set[int]) -> int:
    """Edges into leaves that nobody named (not parameters, not the user's variables) and
    that still have no gradient."""
    nodes = walk.nodes
    count = 0
    for edge in walk.edges:
        target = nodes[edge.target].ptr
        if target not in accumulation or target in ann.params:
            continue
        note = ann.edges.get((nodes[edge.source].ptr, edge.slot))
        if note is None or note.grad is None:
            count += 1
    return count
