"""What the run explorer (js/run_widget.ts) is sent of a run log, read only through the reader's
API (runs/reader.py, see the contract in its docstring): one JSON description of the run and
its matrices as little-endian binary buffers, never JSON lists (10,000 steps x 1,000 layers of
norms is 40 MB of float32; as JSON numbers it would be several times that and slow to parse).

Buffers: ``steps`` float64 (S,) (exact for any step below 2**53), ``loss`` float64 (S,), NaN
where unknown, ``norms`` float32 (S, L) step-major: the layers' gradient L2 norms, NaN/Inf
when a gradient held NaN/Inf, and -1 where none of the layer's parameters had a gradient at
that step (the reader's NaN for "no gradient", kept apart from a NaN gradient); ``bad`` uint8
(S, L): 1 where a parameter of the layer had NaN or Inf gradient elements (the norm the writer
records is that of the finite ones, so the cell's colour says so instead). One step's
per-parameter summary (``step_summary``) is (4, P): norm, max|g|, NaN count, Inf count, float32,
or float64 when a count is past float32's exact integers (``summary_width``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

#: The per-parameter statistics of a step summary, in the order of its rows (reader names).
SUMMARY_STATS = ("norm", "max_abs", "nan", "inf")


class RunLike(Protocol):
    """The part of the reader's RunLog (runs/reader.py) the explorer reads."""

    path: Any
    meta: dict[str, Any]
    params: list[Any]
    layers: list[str]
    steps: np.ndarray
    loss: np.ndarray
    anomalies: list[Any]
    captured_steps: list[int]

    def refresh(self) -> bool: ...
    def param_stat(self, stat: str) -> np.ndarray: ...
    def layer_norm(self) -> np.ndarray: ...
    def layer_bad(self) -> np.ndarray: ...
    def graph(self, step: int) -> dict[str, Any]: ...


def _finite_or_none(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _json_safe(value: Any) -> Any:
    """Meta values as JSON can carry them (NaN/Inf thresholds as None)."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, np.generic):
        return _json_safe(value.item())
    return str(value)


def anomaly_json(anomaly: Any) -> dict[str, Any]:
    """One Anomaly as the page reads it; ``message`` is its words (``str(anomaly)``)."""
    return {
        "step": int(anomaly.step),
        "kind": str(anomaly.kind),
        "layer": str(anomaly.layer or ""),
        "params": [str(p) for p in (anomaly.params or [])],
        "value": _finite_or_none(anomaly.value),
        "threshold": _finite_or_none(anomaly.threshold),
        "message": str(anomaly.message or anomaly),
    }


def run_description(run: RunLike) -> dict[str, Any]:
    """Everything about the run but its matrices: names, captures, anomalies, meta."""
    meta = dict(run.meta)
    return {
        "path": str(run.path),
        "meta": _json_safe(meta),
        "layers": [str(layer) for layer in run.layers],
        "params": [
            {
                "name": str(p.name),
                "layer": str(p.layer),
                "shape": [int(d) for d in p.shape],
                "dtype": str(p.dtype),
            }
            for p in run.params
        ],
        "captured": sorted(int(s) for s in run.captured_steps),
        "anomalies": [anomaly_json(a) for a in run.anomalies],
        "steps": int(len(run.steps)),
        "nonfinite_loss": nonfinite_loss(run),
        # when the run last wrote a step and when it was read (epoch seconds): the page says
        # how long a "running" run has been silent (js/view/run_status.ts)
        "written": _finite_or_none(getattr(run, "last_write", None)),
        "read_at": time.time(),
    }


def nonfinite_loss(run: RunLike) -> list[list[int]]:
    """The stretches of recorded steps whose loss was NaN or Inf, ``[[first, last], ...]``
    (steps, inclusive): the loss curve marks each of their steps. A NaN in the loss buffer is
    also an unknown loss, and the anomalies name only a stretch's first step (anomalies.py)."""
    loss = np.asarray(run.loss, np.float64)
    unknown = getattr(run, "loss_unknown", None)
    bad = ~np.isfinite(loss)
    if unknown is not None and len(unknown) == len(loss):
        bad &= ~np.asarray(unknown, bool)
    else:  # a reader that cannot tell: only Inf is surely a loss that was not finite
        bad = np.isinf(loss)
    if not bad.any():
        return []
    steps = np.asarray(run.steps, np.int64)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], bad.view(np.int8), [0]))))
    return [[int(steps[a]), int(steps[b - 1])] for a, b in zip(edges[::2], edges[1::2])]


def _buffer(array: np.ndarray, dtype: str) -> bytes:
    return np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()


def run_buffers(run: RunLike) -> dict[str, bytes]:
    """The run's matrices: ``steps``, ``loss`` and ``norms`` (see the module's docstring)."""
    steps = np.asarray(run.steps)
    norms = np.asarray(run.layer_norm())
    expected = (len(steps), len(run.layers))
    if norms.shape != expected:
        raise ValueError(
            f"run log {run.path}: layer_norm() has shape {norms.shape}, expected {expected} "
            "(steps x layers); the run log's reader and its files disagree"
        )
    seen, bad = _layer_flags(run, norms.shape)
    marked = np.array(norms, dtype=np.float32, copy=True)
    marked[~seen] = NO_GRADIENT
    return {
        "steps": _buffer(steps, "f8"),
        "loss": _buffer(np.asarray(run.loss), "f8"),
        "norms": _buffer(marked, "f4"),
        "bad": np.ascontiguousarray(bad, dtype=np.uint8).tobytes(),
    }


#: The value of a (step, layer) cell none of whose parameters had a gradient.
NO_GRADIENT = -1.0


def _layer_flags(run: RunLike, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(S, L) booleans: the layer had a gradient (its norm is NaN where none of its
    parameters had one: the norm is over finite elements, so a NaN gradient keeps it a number),
    and one of its parameters' gradients held NaN or Inf. Per-layer columns only (run_schema
    1.2's digest parts), no parameter's column."""
    seen = ~np.isnan(np.asarray(run.layer_norm()))
    bad = np.asarray(run.layer_bad(), dtype=bool)
    if seen.shape != shape or bad.shape != shape:
        raise ValueError(f"run log {run.path}: layer_bad() has shape {bad.shape}, expected "
                         f"{shape}")  # fmt: skip
    return seen, bad


def summary_matrix(run: RunLike) -> np.ndarray:
    """(S, 4, P): every step's per-parameter summary, rows as in SUMMARY_STATS; float32, or
    float64 when a NaN/Inf count is past float32's exact integers (summary_width)."""
    grids = [np.asarray(run.param_stat(s)) for s in SUMMARY_STATS]
    wide = max(summary_width(g) for g in grids[2:]) == 8
    dtype = np.float64 if wide else np.float32
    return np.stack([g.astype(dtype, copy=False) for g in grids], 1)


#: NaN/Inf counts up to this are exact in float32 (past it 16,777,219 reads 16,777,220).
EXACT_IN_F32 = 1 << 24


def summary_width(counts: np.ndarray) -> int:
    """Bytes per value of a summary buffer holding NaN/Inf ``counts``: 4 (float32, half the
    bytes of a saved page's every-step summaries) unless a count is past EXACT_IN_F32, then 8
    (float64; js/view/run_data.ts decodeSummary reads either)."""
    with np.errstate(invalid="ignore"):  # NaN: a parameter without a gradient
        return 8 if bool(np.any(np.asarray(counts) > EXACT_IN_F32)) else 4


def summary_bytes(rows: np.ndarray) -> bytes:
    """One step's (4, P) summary as the page reads it (summary_width's float32 or float64)."""
    return _buffer(rows, f"f{summary_width(rows[2:])}")


def step_index(run: RunLike, step: int) -> int:
    """Position of recorded step ``step`` in ``run.steps``; ValueError naming the range if it
    was not recorded."""
    steps = np.asarray(run.steps)
    at = int(np.searchsorted(steps, step))
    if at >= len(steps) or int(steps[at]) != step:
        span = f"{int(steps[0])}..{int(steps[-1])}" if len(steps) else "none yet"
        raise ValueError(f"step {step} is not recorded in run log {run.path} (steps: {span})")
    return at


def step_summary(run: RunLike, step: int) -> bytes:
    """Step ``step``'s per-parameter summary: (4, P) as bytes (summary_bytes)."""
    at = step_index(run, step)
    rows = [np.asarray(run.param_stat(s), np.float64)[at] for s in SUMMARY_STATS]
    return summary_bytes(np.stack(rows))


def run_line(run: Mapping[str, Any], ranks: int = 0, job: object = None, rank: int = -1) -> str:
    """One line for the run explorer where no front end shows it (a prompt, a saved
    notebook's text): its path, steps, status, parameters, captures and anomalies (of the
    rank shown, for a job of ``ranks`` ranks in folder ``job``)."""
    try:
        meta = run.get("meta") or {}
        status = str(meta.get("status") or "unknown")
        anomalies = len(run.get("anomalies") or ())
        parts = [
            f"{int(run.get('steps') or 0):,} steps ({status})",
            f"{len(run.get('params') or ()):,} parameters",
            f"{len(run.get('captured') or ())} full captures",
            f"{anomalies} {'anomaly' if anomalies == 1 else 'anomalies'}",
        ]
        if ranks:
            return f"RunWidget: {job}: {ranks} ranks, rank {rank}: " + " · ".join(parts)
        return f"RunWidget: {run.get('path', '?')}: " + " · ".join(parts)
    except Exception:  # noqa: BLE001 - a repr must never fail
        return "RunWidget: a training run's log"
