"""``trace(stats=True, steps=K)``: the gradient statistics of each backward, and of the last K
ones as a history a later graph of the same model can be matched to.

A step's statistics are kept by *position* (the edge's source in breadth-first order from
the roots, and its ``next_functions`` index), not by pointer: every training step builds new
GradNodes, but the same model builds them in the same order. A history step is shown on a
graph only if its node names, in that order, are the graph's (its ``signature``), and it
reaches the same parameters there: a parameter's accumulation node, which lives as long as the
parameter, is named with its pointer (a multi-task model's heads are alike op for op).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ...graph.parts import GradStats
from ..read.walk import WalkResult
from .grad_stats import StatsCapture
from .hooked_nodes import received_of
from .stats_rows import BackwardStats, backward_stats
from .vlog import vlog_silenced


def senders_of(walk: WalkResult) -> dict[int, list[tuple[int, int]]]:
    """Node ptr -> the (source ptr, next_functions index) edges that hand it a gradient."""
    senders: dict[int, list[tuple[int, int]]] = {}
    ptrs, add = walk.ptrs, senders.setdefault
    for source, target, slot in walk.edges:  # tuples unpacked: no attribute read per edge
        add(ptrs[target], []).append((ptrs[source], slot))
    return senders


def stats_available(roots: Sequence[Any]) -> bool:
    """Node post hooks exist (Paddle >= 3.0)."""
    return all(hasattr(r, "_register_post_hook") for r in roots)


def run_with_stats(
    run: Callable[[], Any], walk: WalkResult, nodes: Sequence[Any], outputs: Sequence[Any] = (),
    receivers: Callable[[int], list[Any] | None] | None = None,
) -> tuple[Any, BackwardStats]:  # fmt: skip
    """Run a backward over the walked graph with every hookable node of ``nodes`` (its
    GradNodes, in walk order) hooked; ``outputs``: the tensors it starts from, checked for
    NaN/Inf of the forward."""
    capture = StatsCapture()
    try:
        senders = senders_of(walk)
        capture.arm(nodes, receivers, senders, received_of(walk), walk.nodes)
        with vlog_silenced():  # runs inside the backward's log capture: not Paddle's account
            capture.observe_outputs(outputs)
        result = run()
        with vlog_silenced():
            raw = capture.collect()
        stats = backward_stats(capture.runs, raw, capture.skipped, capture.output_rows, senders)
        stats.grads, stats.received = capture.grads, capture.received
        return result, stats
    finally:
        capture.disarm()


@dataclass(frozen=True)
class StepStats:
    """One backward's statistics by position: (source index, next index) -> GradStats."""

    step: int
    signature: tuple[str, ...]  # node names in breadth-first order
    edges: dict[tuple[int, int], GradStats]
    first_nonfinite: int | None  # node index


def graph_signature(walk: WalkResult, params: Collection[int] = ()) -> tuple[str, ...]:
    """The walk's node names in order; ``params``: the parameters' accumulation node ptrs,
    named with their ptr (an input's leaf is another node each step: named alone)."""
    if not params:
        return tuple([n.name for n in walk.nodes])
    return tuple([f"{n.name}@{n.ptr}" if n.ptr in params else n.name for n in walk.nodes])


def by_position(
    step: int, walk: WalkResult, stats: BackwardStats, index: dict[int, int] | None = None,
    signature: tuple[str, ...] | None = None,
) -> StepStats:  # fmt: skip
    """``index`` (ptr -> position) and ``signature``: the walk's, if made already."""
    if index is None:
        index = {n.ptr: n.index for n in walk.nodes}
    if signature is None:
        signature = graph_signature(walk)
    edges = {(index[ptr], slot): s for (ptr, slot), s in stats.edges.items() if ptr in index}
    first = index.get(stats.first_nonfinite) if stats.first_nonfinite is not None else None
    return StepStats(step, signature, edges, first)


class StatsHistory:
    """The last ``size`` steps; memory is bounded by ``size`` times one step's edges."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"steps must be >= 1 (how many backward passes to keep), got {size}")
        self._steps: deque[StepStats] = deque(maxlen=size)
        self.count = 0  # backward passes seen, kept or not

    def add(
        self, walk: WalkResult, stats: BackwardStats, index: dict[int, int] | None = None,
        signature: tuple[str, ...] | None = None,
    ) -> None:  # fmt: skip
        self._steps.append(by_position(self.count, walk, stats, index, signature))
        self.count += 1

    def matching(self, signature: tuple[str, ...]) -> list[StepStats]:
        """The kept steps whose graph has this shape (node names in BFS order), oldest first."""
        return [s for s in self._steps if s.signature == signature]

    def __iter__(self) -> Iterator[StepStats]:
        return iter(self._steps)

    def __len__(self) -> int:
        return len(self._steps)
