"""From the raw rows a stats capture brought back (grad_stats.py) to gradient statistics per
edge and the GradNode where the first NaN/Inf was born. Pure: numbers and pointers in."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import starmap
from typing import Any, Protocol

from ...graph.parts import GradInfo, GradStats

NORM, MAX_ABS, ABS_SUM, ZEROS, NAN, INF, NUMEL = range(7)


class Run(Protocol):
    """One hooked node's run, as the capture recorded it (grad_stats.py NodeRun)."""

    @property
    def ptr(self) -> int: ...

    @property
    def rows(self) -> Mapping[int, int]:  # next_functions index -> row of its statistics
        ...

    @property
    def complete(self) -> bool:  # every gradient it sent was matched to its edge
        ...


# An edge's statistics as the capture made them: GradStats.FIELDS' values in a plain tuple
StatsValues = tuple[float, float, float, float, int, int]


@dataclass
class BackwardStats:
    """What one backward's gradients looked like, keyed by GradNode pointer."""

    # each edge's statistics as plain tuples (GradStats.FIELDS' values), made in C from the
    # capture's table: ~11k a 10k-GradNode backward, whose GradStats objects (made when
    # ``edges`` is first read) a watched run's capture never needs (~15 ms of its step)
    rows: dict[tuple[int, int], StatsValues] = field(default_factory=dict)
    first_nonfinite: int | None = None  # ptr of the node that turned finite into NaN/Inf
    nonfinite_in_forward: bool = False  # the tensors backward started from were NaN/Inf
    # ptrs of the hooked nodes that ran and whose every gradient found its edge: what a
    # node in `ran` did not send, it sent nothing (a parameter's "none")
    ran: frozenset[int] = frozenset()
    skipped: frozenset[int] = frozenset()  # op nodes that could not be hooked
    # forward_finite.ForwardCulprit: the first layer whose forward output held a NaN/Inf
    forward_culprit: Any = None
    # What the hooks saw (grad_stats.StatsCapture): each gradient's dtype/shape/place as sent,
    # by (node ptr, next_functions index); and as received, by node ptr (merge/hook_grads.py)
    grads: dict[tuple[int, int], GradInfo] = field(default_factory=dict)
    received: dict[int, GradInfo] = field(default_factory=dict)
    loss_scale: Any = None  # loss_scaling.LossScale: a GradScaler scaled these gradients
    # Nodes whose incoming gradient a user's hook changed (user_hooks.py): what their
    # senders sent is not what they received
    user_hooked: frozenset[int] = frozenset()
    # the first NaN/Inf is at such a node: the user's hook or the node made it
    nonfinite_after_user_hook: bool = False
    # Edges whose float64 gradient's norm or mean |g| is past float64's range (finite
    # elements near 1e308): no statistics, and their largest |g| for the words saying why
    past_range: dict[tuple[int, int], float] = field(default_factory=dict)
    _edges: dict[tuple[int, int], GradStats] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def edges(self) -> dict[tuple[int, int], GradStats]:
        """Each edge's GradStats, made from ``rows`` when first read; from then on this dict
        (which a caller may add to) is the statistics, and ``rows`` is left unread."""
        if self._edges is None:
            self._edges = dict(zip(self.rows, starmap(GradStats, self.rows.values())))
        return self._edges

    def values(self) -> dict[tuple[int, int], StatsValues] | dict[tuple[int, int], GradStats]:
        """Each edge's statistics without making a GradStats per edge: the plain tuples, or the
        GradStats once ``edges`` was read (tell them apart with ``type(v) is tuple``)."""
        return self.rows if self._edges is None else self._edges


def _all_stats(raw: Any) -> tuple[list[StatsValues | None], list[bool], list[int]]:
    """Every row's statistics (GradStats.FIELDS' values, a plain tuple) and whether it holds
    a NaN/Inf, column by column (~11k rows): sizes over the finite elements (mean_abs 0 when
    none is), zero_fraction over all. None for a row whose norm or mean |g| is not finite:
    float64 elements near 1e308 sum past float64's range, and an Infinity for a finite
    gradient is no number JSON can carry (the page refused the whole graph, save() raised);
    those rows are listed third."""
    import numpy as np

    table = np.asarray(raw, dtype=np.float64)
    if table.ndim != 2 or not len(table):
        return [], [], []
    numel, nan, inf = table[:, NUMEL], table[:, NAN], table[:, INF]
    finite = numel - nan - inf
    mean_abs = np.divide(table[:, ABS_SUM], finite, out=np.zeros(len(table)), where=finite > 0)
    zeros = np.divide(table[:, ZEROS], numel, out=np.zeros(len(table)), where=numel > 0)
    nans, infs = nan.astype(np.int64), inf.astype(np.int64)
    columns = (table[:, NORM], table[:, MAX_ABS], mean_abs, zeros, nans, infs)
    stats: list[Any] = list(zip(*(c.tolist() for c in columns)))
    past = np.flatnonzero(~(np.isfinite(table[:, NORM]) & np.isfinite(mean_abs))).tolist()
    for k in past:
        stats[k] = None
    return stats, ((nans != 0) | (infs != 0)).tolist(), past


@dataclass
class HookLog:
    """What the statistics hooks recorded, flat (grad_stats.py): one entry per call and per row,
    no object per node run (~8k calls a llama-10k backward, each inside Paddle's backward)."""

    order: list[int] = field(default_factory=list)  # each run's node ptr, in the order they ran
    # per row of the raw statistics: the (node ptr, next_functions index) edge it is of; None
    # for a row of no edge (the tensors backward started from)
    keys: list[tuple[int, int] | None] = field(default_factory=list)
    incomplete: list[int] = field(default_factory=list)  # ptrs of runs with a gradient unplaced


def hook_log(runs: Iterable[Run]) -> HookLog:
    """The flat log of node runs given one by one."""
    out = HookLog()
    by_row: dict[int, tuple[int, int]] = {}
    for run in runs:
        out.order.append(run.ptr)
        if not run.complete:
            out.incomplete.append(run.ptr)
        for index, row in run.rows.items():
            by_row[row] = (run.ptr, index)
    out.keys = [by_row.get(k) for k in range(max(by_row, default=-1) + 1)]
    return out


def backward_stats(
    runs: Iterable[Run] | HookLog,
    raw: Any,
    skipped: Iterable[int] = (),
    output_rows: Iterable[int] = (),
    senders: Mapping[int, Iterable[tuple[int, int]]] | None = None,
    user_hooked: Collection[int] = frozenset(),
) -> BackwardStats:
    """``runs``: the hooks' log (or its runs, in the order the nodes ran); ``raw``: the rows
    (None when nothing was reduced); ``output_rows``: rows of the tensors backward started
    from; ``senders``: node ptr -> the (source ptr, index) edges into it, so that what a node
    received is what they sent."""
    log = runs if isinstance(runs, HookLog) else hook_log(runs)
    out = BackwardStats(skipped=frozenset(skipped), user_hooked=frozenset(user_hooked))
    stats, bad, past = _all_stats(raw) if raw is not None else ([], [], [])
    out.nonfinite_in_forward = any(bad[k] for k in output_rows)
    out.ran = frozenset(log.order).difference(log.incomplete)
    keys = log.keys[: len(stats)]
    # each edge's statistics in C; a row of no edge, or past float64's range, taken out after
    edges: dict[Any, Any] = dict(zip(keys, stats))
    edges.pop(None, None)
    for k in past:
        key = keys[k] if k < len(keys) else None
        if key is not None:
            edges.pop(key, None)
            out.past_range[key] = float(raw[k][MAX_ABS])
    out.rows = edges
    if any(bad):
        _first_nonfinite(out, log, keys, bad, {} if senders is None else senders)
    return out


def _first_nonfinite(
    out: BackwardStats, log: HookLog, keys: list[tuple[int, int] | None], bad: list[bool],
    senders: Mapping[int, Iterable[tuple[int, int]]],
) -> None:  # fmt: skip
    """The first node (in the order they ran) that sent a NaN/Inf and received none."""
    rows: dict[int, list[int]] = {}
    for k, key in enumerate(keys):
        if key is not None:
            rows.setdefault(key[0], []).append(k)
    sent_bad: set[tuple[int, int]] = set()  # edges whose gradient held a NaN/Inf
    for ptr in dict.fromkeys(log.order):
        sent = [keys[k] for k in rows.get(ptr, ()) if bad[k]]
        sent_bad.update(sent)  # type: ignore[arg-type]
        # what it received, read only then: finite, and this node made the first NaN/Inf
        if sent and not any(key in sent_bad for key in senders.get(ptr, ())):
            out.first_nonfinite = ptr
            # a user's hook between its senders and it may have made the NaN/Inf
            out.nonfinite_after_user_hook = ptr in out.user_hooked
            return
