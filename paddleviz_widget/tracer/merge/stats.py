"""From the raw rows a stats capture brought back to gradient statistics on edges, the
GradNode where the first NaN/Inf was born, and parameters whose gradient is not a normal one.

Pure: numbers and pointers in, plain data out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...graph.parts import GradStats
from ..read.walk import WalkResult

NORM, MAX_ABS, ABS_SUM, ZEROS, NAN, INF, NUMEL = range(7)


class Run(Protocol):
    """One hooked node's run, as the capture recorded it (capture/grad_stats.py NodeRun)."""

    ptr: int
    rows: Mapping[int, int]  # next_functions index -> row of its gradient's statistics
    received_row: int | None  # row of what it received (nan and inf summed), if any


@dataclass
class BackwardStats:
    """What one backward's gradients looked like, keyed by GradNode pointer."""

    edges: dict[tuple[int, int], GradStats] = field(default_factory=dict)
    first_nonfinite: int | None = None  # ptr of the node that turned finite into NaN/Inf
    ran: frozenset[int] = frozenset()  # ptrs of the hooked nodes that ran
    skipped: frozenset[int] = frozenset()  # op nodes that could not be hooked


def _stats(row: Sequence[float]) -> GradStats:
    numel = row[NUMEL]
    finite = numel - row[NAN] - row[INF]
    return GradStats(
        norm=float(row[NORM]),
        max_abs=float(row[MAX_ABS]),
        mean_abs=float(row[ABS_SUM] / finite) if finite > 0 else 0.0,
        zero_fraction=float(row[ZEROS] / numel) if numel > 0 else 0.0,
        nan=int(row[NAN]),
        inf=int(row[INF]),
    )


def backward_stats(runs: Iterable[Run], raw: Any, skipped: Iterable[int] = ()) -> BackwardStats:
    """``runs`` in the order the nodes ran; ``raw``: the rows (None when nothing was reduced)."""
    out = BackwardStats(skipped=frozenset(skipped))
    ran = []
    for run in runs:
        ran.append(run.ptr)
        bad_out = False
        for index, row in run.rows.items():
            stats = _stats(raw[row])
            out.edges[(run.ptr, index)] = stats
            bad_out = bad_out or not stats.finite
        received = raw[run.received_row] if run.received_row is not None else None
        bad_in = received is not None and received[NAN] + received[INF] > 0
        if out.first_nonfinite is None and bad_out and not bad_in:
            out.first_nonfinite = run.ptr
    out.ran = frozenset(ran)
    return out


def param_statuses(walk: WalkResult, stats: BackwardStats) -> dict[int, str]:
    """Accumulation ptr -> "zero" (every gradient that reached it was all zeros) or "none"
    (its senders ran and sent it nothing). Left out when normal or not known."""
    incoming: dict[int, list[tuple[int, int]]] = {}
    nodes = walk.nodes
    for e in walk.edges:
        target = nodes[e.target]
        if target.is_accumulation:
            incoming.setdefault(target.ptr, []).append((nodes[e.source].ptr, e.slot))
    statuses = {}
    for ptr, edges in incoming.items():
        if any(src not in stats.ran for src, _ in edges):
            continue  # a sender that was not hooked or did not run: nothing is known
        got = [stats.edges[key] for key in edges if key in stats.edges]
        if not got:
            statuses[ptr] = "none"
        elif len(got) == len(edges) and all(s.zero_fraction == 1.0 for s in got):
            statuses[ptr] = "zero"
    return statuses
