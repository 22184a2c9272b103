"""trace(stats=True) on an exploding gradient: finite values whose sum of |g| is past the
dtype's range (1e37s in float32, 1e306s in float64). Reading them printed NumPy's
"RuntimeWarning: overflow encountered in reduce" into the user's output, and under warnings
as errors (pytest -W error, a notebook's filter) made the user's loss.backward() raise an
OSError, where untraced it runs. Oracle: the gradient Paddle hands a tensor hook, reduced by
NumPy in float64 here (norm scaled by its maximum: the squares overflow too)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import Graph
from paddleviz_widget.tracer.capture.cpu_reduce import SPLIT_FROM

pytestmark = requires_post_hooks


def _oracle(g: np.ndarray) -> tuple[float, float]:
    a = np.abs(g.astype(np.float64)).reshape(-1)
    top = float(a.max())
    return top * math.sqrt(float(((a / top) ** 2).sum())), top


@pytest.mark.parametrize(
    ("dtype", "value", "n"),
    [
        ("float32", 1e37, 10_000),  # one chunk, read in place: its float32 sum overflows
        ("float32", 1e37, SPLIT_FROM + 8),  # two threads read it: the helper's warning too
        # the float64 sum of the finite ones overflows: its mean |g| is past float64's range,
        # and the edge shows no statistics (test_stats_past_float64.py), with its reason
        ("float64", 1e306, 5_000),
    ],
)
def test_an_exploding_gradient_prints_nothing_and_never_stops_the_backward(
    dtype: str, value: float, n: int, capfd: pytest.CaptureFixture[str]
) -> None:
    x = paddle.ones([n], dtype)
    x.stop_gradient = False
    w = paddle.full([n], value, dtype)
    seen: list[np.ndarray] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # what pytest -W error sets: a warning raises
        with trace(stats=True):
            h = x * 1.0
            h.register_hook(lambda g: seen.append(g.numpy().copy()))
            loss = (h * w).sum()
            loss.backward()  # raised OSError (External) RuntimeWarning before the fix
    out, err = capfd.readouterr()
    assert "Warning" not in out + err, out + err
    graph = Graph.from_dict(build_graph(loss))
    if dtype == "float64":
        absent = [e for e in graph.edges if e.stats is None and e.no_stats]
        assert absent and all("past float64's range" in (e.no_stats or "") for e in absent)
        return
    into_h = [e for e in graph.edges if e.stats is not None and e.stats.max_abs > 1]
    assert into_h, "the edge into h carries statistics"
    norm, top = _oracle(seen[0])
    for e in into_h:  # x * 1.0's node receives the gradient h's hook saw
        assert e.stats.norm == pytest.approx(norm, rel=1e-6)
        assert e.stats.max_abs == top
        assert e.stats.nan == e.stats.inf == 0
