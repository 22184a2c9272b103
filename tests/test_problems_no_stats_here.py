"""problems() of a graph without statistics names the way to them that works on this Paddle:
on 2.6, which refuses trace(stats=True) (no GradNode post hooks), an upgrade, not the
``trace(model, stats=True)`` it used to advise (round 24)."""

from __future__ import annotations

import paddle
import paddle.nn as nn
import pytest
from paddle_versions import HAS_POST_HOOKS

from paddleviz_widget import GraphWidget, trace


@pytest.mark.skipif(HAS_POST_HOOKS, reason=f"paddle {paddle.__version__} has GradNode post hooks")
def test_the_advice_is_an_upgrade_where_stats_cannot_be_had():
    paddle.seed(0)
    model = nn.Linear(4, 1)
    with trace(model):
        y = model(paddle.randn([2, 4]))
        y.sum().backward()
    text = str(GraphWidget(y).problems())
    assert "nothing was checked" in text
    assert "paddlepaddle>=3.0" in text and paddle.__version__ in text
    assert "inside `with trace(model, stats=True):`" not in text
    with pytest.raises(RuntimeError, match="paddlepaddle>=3.0"), trace(model, stats=True):
        pass  # (the advice it replaced: refused on this version)


def test_where_stats_can_be_had_the_advice_is_trace_stats():
    if not HAS_POST_HOOKS:
        pytest.skip(f"paddle {paddle.__version__}: GradNode post hooks need >= 3.0")
    paddle.seed(0)
    model = nn.Linear(4, 1)
    with trace(model):
        y = model(paddle.randn([2, 4]))
        y.sum().backward()
    assert "inside `with trace(model, stats=True):`" in str(GraphWidget(y).problems())
