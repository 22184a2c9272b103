"""A tail line (runs/tail_line.py) reads back as the step it records, whichever way it was
written: the orjson line of an ordinary step, the json line of one with a parameter without
a gradient or a non-finite value."""

from __future__ import annotations

import json

import numpy as np
import pytest

from paddleviz_widget.runs.tail_line import TailLines


def _stats(rng, n):
    norm = (rng.random(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    max_abs = (norm * rng.random(n)).astype(np.float32)
    return norm, max_abs, np.zeros(n), np.zeros(n)


def _check(line: bytes, step, norm, max_abs, nan, inf, loss):
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    row = json.loads(line)
    assert list(row) == ["step", "loss", "norm", "max_abs", "nan", "inf"]
    assert row["step"] == step and type(row["step"]) is int
    if loss is None:
        assert row["loss"] is None
    elif np.isfinite(loss):
        assert row["loss"] == loss
    else:
        assert row["loss"] == str(loss)
    absent = np.isnan(norm)
    for key, want in zip(["norm", "max_abs", "nan", "inf"], [norm, max_abs, nan, inf]):
        got = row[key]
        assert [v is None for v in got] == absent.tolist()
        kept = np.array([v for v in got if v is not None], np.float32)
        np.testing.assert_array_equal(kept, np.asarray(want, np.float32)[~absent])
        if key in ("nan", "inf"):
            assert all(type(v) is int for v in got if v is not None)


@pytest.mark.parametrize("loss", [0.123456789, None, float("nan"), float("inf"), -1e-300])
def test_ordinary_step_reads_back_exactly(loss):
    rng = np.random.default_rng(0)
    lines = TailLines(37)
    for step in range(20):
        norm, max_abs, nan, inf = _stats(rng, 37)
        if step % 3 == 0:
            nan[step] = 4  # counts of a step with NaN gradients
            inf[-1] = 2
        line = lines.line(step * 1000, norm, max_abs, nan, inf, loss)
        _check(line, step * 1000, norm, max_abs, nan, inf, loss)


def test_absent_and_non_finite_values_keep_their_meaning():
    rng = np.random.default_rng(1)
    lines = TailLines(6)
    norm, max_abs, nan, inf = _stats(rng, 6)
    norm[2] = max_abs[2] = np.nan  # no gradient: null in all four lists
    _check(lines.line(5, norm, max_abs, nan, inf, 1.0), 5, norm, max_abs, nan, inf, 1.0)
    norm, max_abs, nan, inf = _stats(rng, 6)
    norm[1] = np.inf  # a present parameter's norm beyond float32: Infinity, not null
    row = json.loads(lines.line(6, norm, max_abs, nan, inf, 1.0))
    assert row["norm"][1] == float("inf") and None not in row["norm"]


def test_no_parameters():
    empty = np.zeros(0)
    row = json.loads(TailLines(0).line(0, empty.astype(np.float32), empty, empty, empty, 2.0))
    assert row == {"step": 0, "loss": 2.0, "norm": [], "max_abs": [], "nan": [], "inf": []}


@pytest.mark.parametrize("loss", [0.123456789, None, float("nan"), float("-inf"), 3.0])
def test_a_clean_step_is_the_same_bytes_in_one_call(loss):
    """clean=True (every parameter has a gradient, all finite, no NaN/Inf): the line the
    caller's knowledge lets one orjson call write is the line of the ordinary path."""
    rng = np.random.default_rng(2)
    lines = TailLines(23)
    for step in (0, 7, 123456):
        norm, max_abs, nan, inf = _stats(rng, 23)
        want = lines.line(step, norm, max_abs, nan, inf, loss)
        assert lines.line(step, norm, max_abs, nan, inf, loss, clean=True) == want
