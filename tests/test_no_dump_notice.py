"""On Paddle 2.6 and 3.0 (no backward dump) the notices of graphs trace()'s log did not
annotate name what helps: no "GLOG_v=6 before import paddle", which trace() no longer needs
there (glog's FLAGS_v is switched at run time: test_vlog_cell.py) and which would change
nothing for these graphs (round 24)."""

from __future__ import annotations

import paddle
import paddle.nn as nn
import pytest
from paddle_versions import HAS_DUMP, LOGS_AT_RUN_TIME

from paddleviz_widget import build_graph, trace

pytestmark = pytest.mark.skipif(
    HAS_DUMP or not LOGS_AT_RUN_TIME,
    reason=f"paddle {paddle.__version__}: no dump, its log switched at run time",
)


def _model() -> nn.Layer:
    paddle.seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def test_a_backward_outside_trace_is_told_to_run_inside_it():
    model = _model()
    y = model(paddle.randn([2, 4]))
    y.sum().backward()
    notice = build_graph(y)["meta"]["notice"]
    assert "inside `with paddleviz_widget.trace(model):`" in notice
    assert "GLOG_v" not in notice


def test_paddle_grad_inside_trace_is_not_told_to_set_glog_v():
    model = _model()
    with trace(model):
        y = model(paddle.randn([2, 4]))
        paddle.grad([y.sum()], [model[0].weight])
    notice = build_graph(y)["meta"]["notice"]
    assert "a backward() run inside this trace()" in notice
    assert "GLOG_v" not in notice
