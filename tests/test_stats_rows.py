"""backward_stats's rows -> GradStats, column by column, against the per-row formula written
out in Python floats (what it computed one row at a time before)."""

from __future__ import annotations

import json

import numpy as np

from paddleviz_widget.graph.parts import GradStats
from paddleviz_widget.tracer.capture.grad_stats import NodeRun
from paddleviz_widget.tracer.capture.stats_rows import backward_stats
from paddleviz_widget.tracer.merge.capture_columns import _stats_rows


def _row_stats(row: list[float]) -> GradStats:
    norm, max_abs, abs_sum, zeros, nan, inf, numel = row
    finite = numel - nan - inf
    return GradStats(
        norm=float(norm),
        max_abs=float(max_abs),
        mean_abs=float(abs_sum / finite) if finite > 0 else 0.0,
        zero_fraction=float(zeros / numel) if numel > 0 else 0.0,
        nan=int(nan),
        inf=int(inf),
    )


def _rows(rng: np.random.Generator, n: int) -> np.ndarray:
    numel = rng.integers(0, 5000, n).astype(float)
    nan = np.minimum(numel, rng.integers(0, 3, n) * rng.integers(0, 2, n))
    inf = np.minimum(numel - nan, rng.integers(0, 3, n) * rng.integers(0, 2, n))
    zeros = np.floor(rng.random(n) * (numel - nan - inf + 1))
    raw = np.stack(
        [rng.random(n) * 1e3, rng.random(n), rng.random(n) * numel, zeros, nan, inf, numel], 1
    )
    raw[: n // 10, 6] = raw[: n // 10, 4] + raw[: n // 10, 5]  # no finite element
    raw[n // 10 : n // 5, 4:] = 0  # empty gradients
    return raw


def test_each_edge_gets_its_rows_statistics_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    raw = _rows(rng, 3000)
    runs = [NodeRun(ptr=1000 + k, rows={0: 2 * k, 1: 2 * k + 1}) for k in range(1500)]
    out = backward_stats(runs, raw)
    want = [_row_stats(row) for row in raw.tolist()]
    assert len(out.edges) == 3000
    for k in range(1500):
        for index in (0, 1):
            got, expected = out.edges[(1000 + k, index)], want[2 * k + index]
            assert got == expected
            assert all(type(getattr(got, f)) is type(getattr(expected, f)) for f in got.FIELDS)


def test_first_nonfinite_is_the_first_sender_that_received_none() -> None:
    raw = np.zeros((4, 7))
    raw[:, 6] = 10
    raw[1, 4] = 1  # node 2 sends a NaN
    raw[2, 4] = 1  # node 3, which received it, sends one too
    runs = [NodeRun(1, {0: 0}), NodeRun(2, {0: 1}), NodeRun(3, {0: 2}), NodeRun(4, {0: 3})]
    out = backward_stats(runs, raw, senders={3: [(2, 0)], 2: [(1, 0)]}, output_rows=[3])
    assert out.first_nonfinite == 2 and not out.nonfinite_in_forward
    raw[3, 5] = 2
    assert backward_stats(runs, raw, output_rows=[3]).nonfinite_in_forward


def test_nothing_reduced() -> None:
    out = backward_stats([NodeRun(1, {})], None)
    assert out.edges == {} and out.ran == frozenset({1})


def test_the_capture_columns_take_the_plain_rows_as_the_gradstats_gave_them() -> None:
    """A watched capture's stats column is made from BackwardStats.rows (plain tuples, no
    GradStats): the same JSON text, -0.0 and int counts included, as from each edge's GradStats
    (the statistics read as objects first, or some of each)."""
    rng = np.random.default_rng(3)
    raw = _rows(rng, 400)
    raw[5, 0] = -0.0
    raw[7, 1] = -0.0
    runs = [NodeRun(ptr=1000 + k, rows={0: 2 * k, 1: 2 * k + 1}) for k in range(200)]
    keys = [(1000 + k, i) for k in range(205) for i in (0, 1)]  # the last 10: no statistics
    fresh, read = backward_stats(runs, raw), backward_stats(runs, raw)
    assert fresh.values() is fresh.rows and all(type(v) is tuple for v in fresh.rows.values())
    objects = read.edges
    assert read.values() is objects and all(type(v) is GradStats for v in objects.values())
    want = [
        [None] * 6 if k[0] >= 1200 else [getattr(objects[k], f) for f in GradStats.FIELDS]
        for k in keys
    ]
    mixed = {**dict(list(objects.items())[::2]), **dict(list(fresh.rows.items())[1::2])}
    for stats in (fresh.rows, objects, mixed):
        assert json.dumps(_stats_rows(stats, keys)) == json.dumps(want)
    assert "-0.0" in json.dumps(want)
