"""``trace(stats=True, steps=K)``: the gradient statistics of each backward, and of the last K
ones as a history a later graph of the same model can be matched to.

A step's statistics are kept by *position* (the edge's source in breadth-first order from
the roots, and its ``next_functions`` index), not by pointer: every training step builds new
GradNodes, but the same model builds them in the same order. A history step is shown on a
graph only if its node names, in that order, are the graph's (its ``signature``), and it
reaches the same parameters there: a parameter's accumulation node, which lives as long as the
parameter, is named with its pointer (a multi-task model's heads are alike op for op).
A higher-order GradNode's name carries a number Paddle counts up with each one it makes
("matmul_grad14GradNode"): left out, so that a gradient penalty's graph matches each step.

Steps are kept per graph: a gradient penalty's ``paddle.grad`` inside each training step is
its own graph, and neither evicts nor renumbers the loss's steps (StatsHistory).
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

from ...graph.parts import GradStats
from ...stderr_line import say
from ..read.walk import WalkResult
from .grad_copies import free_failed_copies
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


class Senders(Mapping[int, list[tuple[int, int]]]):
    """senders_of(walk), made when first asked for: only a node whose gradients do not each
    find their edge, a program node, or a NaN/Inf asks (a llama-10k backward, none of them:
    ~2-3 ms of a Python loop over its 11k edges saved)."""

    def __init__(self, walk: WalkResult) -> None:
        self._walk: WalkResult | None = walk
        self._table: dict[int, list[tuple[int, int]]] = {}

    def _made(self) -> dict[int, list[tuple[int, int]]]:
        if self._walk is not None:
            self._table, self._walk = senders_of(self._walk), None
        return self._table

    def __getitem__(self, ptr: int) -> list[tuple[int, int]]:
        return self._made()[ptr]

    def __iter__(self) -> Iterator[int]:
        return iter(self._made())

    def __len__(self) -> int:
        return len(self._made())


def stats_available(roots: Sequence[Any]) -> bool:
    """Node post hooks exist (Paddle >= 3.0)."""
    return all(hasattr(r, "_register_post_hook") for r in roots)


class StatsUnavailableError(RuntimeError):
    """The installed Paddle has no GradNode post hooks (trace(stats=True) reads gradients so)."""


def post_hooks_available() -> bool:
    """GradNode post hooks exist (Paddle >= 3.0), asked of the class: no node is made."""
    import paddle

    node = getattr(getattr(paddle.base, "libpaddle", None), "GradNodeBase", None)
    return node is None or hasattr(node, "_register_post_hook")


NO_CAPTURE_STATS = (
    "paddleviz_widget: paddlepaddle {version} has no GradNode post hooks: this run's full "
    "captures have no gradient statistics, so they show no problems, and a layer whose "
    "gradient goes to exactly 0 for good (which a capture confirms) is not reported; every "
    "step's per-parameter summary, and the anomalies found in it, are complete; "
    "paddlepaddle>=3.0 has them"
)


def say_no_capture_stats() -> None:
    import paddle

    say(NO_CAPTURE_STATS.format(version=paddle.__version__))


def stats_possible(watched: bool, say: bool = True) -> bool:
    """trace(stats=True) on a Paddle without GradNode post hooks (2.6) is refused, rather than
    giving graphs without statistics whose every check would say nothing was checked; a
    watched run goes on without them (its summary needs none), said once on stderr."""
    import paddle

    if post_hooks_available():
        return True
    if watched:
        if say:  # not on a rank trace(ranks=) leaves out: it prints nothing
            say_no_capture_stats()
        return False
    raise StatsUnavailableError(
        f"trace(stats=True) reads each gradient with GradNode post hooks, which paddlepaddle "
        f"{paddle.__version__} does not have: upgrade to paddlepaddle>=3.0, or leave stats out "
        "(trace(model) still gives the graph; a watched run, with run_dir=, still records "
        "every step's per-parameter summary and anomalies)"
    )


def run_with_stats(
    run: Callable[[], Any], walk: WalkResult, nodes: Sequence[Any], outputs: Sequence[Any] = (),
    receivers: Callable[[int], list[Any] | None] | None = None, *, copies: bool = False,
    user_hooked: Collection[int] = frozenset(),
) -> tuple[Any, BackwardStats]:  # fmt: skip
    """Run a backward over the walked graph with every hookable node of ``nodes`` (its
    GradNodes, in walk order) hooked; ``outputs``: the tensors it starts from, checked for
    NaN/Inf of the forward; ``copies``: the backward is paddle.grad's (grad_copies.py);
    ``user_hooked``: the nodes whose incoming gradient a user's hook replaced, filled while the
    backward runs (user_hooks.py)."""
    capture = StatsCapture()
    try:
        senders = Senders(walk)
        capture.arm(nodes, receivers, senders, received_of(walk), walk.nodes)
        with vlog_silenced():  # runs inside the backward's log capture: not Paddle's account
            capture.observe_outputs(outputs)
        try:
            result = run()
        except BaseException:
            if copies:  # before disarm(): its copies of our hooks must not outlive it
                free_failed_copies()
            raise
        with vlog_silenced():
            raw = capture.collect()
        stats = backward_stats(
            capture.log, raw, capture.skipped, capture.output_rows, senders, user_hooked
        )
        stats.grads, stats.received = capture.grads, capture.received
        return result, stats
    finally:
        capture.disarm()


class StepStats:
    """One backward's statistics by position: (source index, next index) -> GradStats.

    ``edges`` is made when first read, from the backward's own (pointer-keyed) statistics and
    its nodes' positions: a history of one step (a watched run's) is never read edge by edge
    (meta.steps needs two), and re-keying ~11k edges cost ~10 ms of each captured step."""

    __slots__ = ("step", "signature", "first_nonfinite", "_edges", "_by_ptr", "_index")

    def __init__(
        self, step: int, signature: tuple[str, ...], by_ptr: dict[tuple[int, int], Any],
        index: dict[int, int], first_nonfinite: int | None,
    ) -> None:  # fmt: skip
        self.step = step
        self.signature = signature  # node names in breadth-first order
        self.first_nonfinite = first_nonfinite  # node index
        self._edges: dict[tuple[int, int], GradStats] | None = None
        self._by_ptr: dict[tuple[int, int], Any] | None = by_ptr
        self._index: dict[int, int] | None = index

    @property
    def edges(self) -> dict[tuple[int, int], GradStats]:
        if self._edges is None:
            index, by_ptr = self._index or {}, self._by_ptr or {}
            # (a capture's statistics come as plain tuples of GradStats.FIELDS' values)
            self._edges = {
                (index[ptr], slot): GradStats(*s) if type(s) is tuple else s
                for (ptr, slot), s in by_ptr.items()
                if ptr in index
            }
            self._by_ptr = self._index = None  # let go of the pointer-keyed copies
        return self._edges


_NUMBERED = re.compile(r"(?<=_grad)\d+(?=GradNode$)")


def graph_signature(walk: WalkResult, params: Collection[int] = ()) -> tuple[str, ...]:
    """The walk's node names in order, without a higher-order node's number; ``params``: the
    parameters' accumulation node ptrs, named with their ptr (an input's leaf is another node
    each step: named alone)."""
    sub = _NUMBERED.sub
    return tuple(
        [
            f"{n.name}@{n.ptr}"
            if n.ptr in params
            else sub("", n.name)
            if "_grad" in n.name
            else n.name
            for n in walk.nodes
        ]
    )  # the "_grad" test costs ~50 ns a node; first-order nodes are CamelCase ("MatmulGradNode")


def by_position(
    step: int, walk: WalkResult, stats: BackwardStats, index: dict[int, int] | None = None,
    signature: tuple[str, ...] | None = None,
) -> StepStats:  # fmt: skip
    """``index`` (ptr -> position) and ``signature``: the walk's, if made already."""
    if index is None:
        index = {n.ptr: n.index for n in walk.nodes}
    if signature is None:
        signature = graph_signature(walk)
    first = index.get(stats.first_nonfinite) if stats.first_nonfinite is not None else None
    # its statistics as the capture left them (plain tuples): GradStats only if edges is read
    return StepStats(step, signature, stats.values(), index, first)


def check_steps(steps: Any) -> None:
    """trace(steps=K) before the session starts: a K that is not a whole number >= 1 was taken
    (2.5, "3") and failed in the first backward's statistics, deep inside the user's loop."""
    if steps is None:
        return
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise TypeError(
            f"steps is how many backward passes to keep, a whole number >= 1 (steps=50), got "
            f"{type(steps).__name__} {steps!r}"
        )
    if steps < 1:
        raise ValueError(f"steps must be >= 1 (how many backward passes to keep), got {steps}")


class StatsHistory:
    """The last ``size`` steps of each of the last GRAPHS graphs; memory is bounded by
    ``size`` times GRAPHS times one step's edges. A step is numbered with the training step it
    belongs to: the backward() calls before it (a gradient penalty's paddle.grad, inside a
    step, takes that step's number), and never one number twice in a graph (a loop of
    paddle.grad alone counts its own passes)."""

    GRAPHS = 4  # a loss and its gradient penalty's paddle.grad make two

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"steps must be >= 1 (how many backward passes to keep), got {size}")
        self.size = size
        self._kept: OrderedDict[tuple[str, ...], deque[StepStats]] = OrderedDict()
        self._last: dict[int, int] = {}  # hash of a graph's signature -> its last step number
        self.count = 0  # backward passes seen, kept or not
        self.backwards = 0  # of which backward() calls (not paddle.grad's): the steps

    def add(
        self, walk: WalkResult, stats: BackwardStats, index: dict[int, int] | None = None,
        signature: tuple[str, ...] | None = None, *, grad_call: bool = False,
    ) -> None:  # fmt: skip
        """``grad_call``: this pass was paddle.grad's (it does not end a step)."""
        if signature is None:
            signature = graph_signature(walk)
        key = hash(signature)  # an int per graph, for every graph seen
        number = max(self.backwards, self._last.get(key, -1) + 1)
        self._last[key] = number
        kept = self._kept.pop(signature, None) or deque(maxlen=self.size)
        if kept and self.size > 1:  # kept on: its edges made now, its pointer copies let go
            kept[-1].edges  # noqa: B018
        kept.append(by_position(number, walk, stats, index, signature))
        self._kept[signature] = kept  # the most recent graph last
        while len(self._kept) > self.GRAPHS:
            self._kept.popitem(last=False)
        self.count += 1
        self.backwards += not grad_call

    def matching(self, signature: tuple[str, ...]) -> list[StepStats]:
        """The kept steps whose graph has this shape (node names in BFS order), oldest first."""
        return list(self._kept.get(signature, ()))

    def __iter__(self) -> Iterator[StepStats]:
        return (s for kept in self._kept.values() for s in kept)

    def __len__(self) -> int:
        return sum(map(len, self._kept.values()))
