"""From the raw rows a stats capture brought back (grad_stats.py) to gradient statistics per
edge and the GradNode where the first NaN/Inf was born. Pure: numbers and pointers in."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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


def backward_stats(
    runs: Iterable[Run],
    raw: Any,
    skipped: Iterable[int] = (),
    output_rows: Iterable[int] = (),
    senders: Mapping[int, Iterable[tuple[int, int]]] | None = None,
) -> BackwardStats:
    """``runs`` in the order the nodes ran; ``raw``: the rows (None when nothing was reduced);
    ``output_rows``: rows of the tensors backward started from; ``senders``: node ptr -> the
    (source ptr, index) edges into it, so that what a node received is what they sent."""
    out = BackwardStats(skipped=frozenset(skipped))
    raw = raw.tolist() if hasattr(raw, "tolist") else raw  # Python floats: ~10x cheaper to read
    out.nonfinite_in_forward = any(raw[k][NAN] + raw[k][INF] > 0 for k in output_rows)
    ran = []
    for run in runs:
        if run.complete:
            ran.append(run.ptr)
        bad_out = False
        for index, row in run.rows.items():
            stats = _stats(raw[row])
            out.edges[(run.ptr, index)] = stats
            bad_out = bad_out or not stats.finite
        if out.first_nonfinite is None and bad_out:  # what it received, read only then
            received = [out.edges.get(key) for key in (senders or {}).get(run.ptr, ())]
            if not any(s is not None and not s.finite for s in received):
                out.first_nonfinite = run.ptr
    out.ran = frozenset(ran)
    return out
