"""From the raw rows a stats capture brought back (grad_stats.py) to gradient statistics per
edge and the GradNode where the first NaN/Inf was born. Pure: numbers and pointers in."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
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


@dataclass
class BackwardStats:
    """What one backward's gradients looked like, keyed by GradNode pointer."""

    edges: dict[tuple[int, int], GradStats] = field(default_factory=dict)
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


def _all_stats(raw: Any) -> tuple[list[GradStats | None], list[bool]]:
    """Every row's GradStats and whether it holds a NaN/Inf, column by column (~11k rows):
    sizes over the finite elements (mean_abs 0 when none is), zero_fraction over all. None
    for a row whose norm or mean |g| is not finite: float64 elements near 1e308 sum past
    float64's range, and an Infinity for a finite gradient is no number JSON can carry (the
    page refused the whole graph, save() raised)."""
    import numpy as np

    table = np.asarray(raw, dtype=np.float64)
    if table.ndim != 2 or not len(table):
        return [], []
    numel, nan, inf = table[:, NUMEL], table[:, NAN], table[:, INF]
    finite = numel - nan - inf
    mean_abs = np.divide(table[:, ABS_SUM], finite, out=np.zeros(len(table)), where=finite > 0)
    zeros = np.divide(table[:, ZEROS], numel, out=np.zeros(len(table)), where=numel > 0)
    nans, infs = nan.astype(np.int64), inf.astype(np.int64)
    columns = (table[:, NORM], table[:, MAX_ABS], mean_abs, zeros, nans, infs)
    stats: list[GradStats | None] = list(map(GradStats, *(c.tolist() for c in columns)))
    for k in np.flatnonzero(~(np.isfinite(table[:, NORM]) & np.isfinite(mean_abs))).tolist():
        stats[k] = None
    return stats, ((nans != 0) | (infs != 0)).tolist()


def backward_stats(
    runs: Iterable[Run],
    raw: Any,
    skipped: Iterable[int] = (),
    output_rows: Iterable[int] = (),
    senders: Mapping[int, Iterable[tuple[int, int]]] | None = None,
    user_hooked: Collection[int] = frozenset(),
) -> BackwardStats:
    """``runs`` in the order the nodes ran; ``raw``: the rows (None when nothing was reduced);
    ``output_rows``: rows of the tensors backward started from; ``senders``: node ptr -> the
    (source ptr, index) edges into it, so that what a node received is what they sent."""
    out = BackwardStats(skipped=frozenset(skipped), user_hooked=frozenset(user_hooked))
    stats, bad = _all_stats(raw) if raw is not None else ([], [])
    out.nonfinite_in_forward = any(bad[k] for k in output_rows)
    ran = []
    edges = out.edges
    searching = True  # for the first node that sent a NaN/Inf and received none
    sent_bad: set[tuple[int, int]] = set()  # edges whose gradient held a NaN/Inf
    for run in runs:
        if run.complete:
            ran.append(run.ptr)
        bad_out = False
        ptr = run.ptr
        for index, row in run.rows.items():
            got = stats[row]
            if got is not None:
                edges[(ptr, index)] = got
            else:
                out.past_range[(ptr, index)] = float(raw[row][MAX_ABS])
            if bad[row]:
                bad_out = True
                sent_bad.add((ptr, index))
        # what it received, read only then: finite, and this node made the first NaN/Inf
        if (searching and bad_out
                and not any(key in sent_bad for key in (senders or {}).get(ptr, ()))):  # fmt: skip
            searching = False
            out.first_nonfinite = ptr
            # a user's hook between its senders and it may have made the NaN/Inf
            out.nonfinite_after_user_hook = ptr in user_hooked
    out.ran = frozenset(ran)
    return out
