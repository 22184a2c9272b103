"""trace()'s on/off arguments are True or False: `trace(model, stats="no")` and
`call_sites="False"` were read as on (a non-empty string is true), without a word."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle_versions import HAS_POST_HOOKS

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import Graph
from paddleviz_widget.tracer.capture.stats_watch import StatsUnavailableError


@pytest.mark.parametrize(
    "switch", [{"stats": "no"}, {"call_sites": "False"}, {"slots": 2}, {"stats": [True]}]
)
def test_a_switch_that_is_not_a_bool_is_refused(switch):
    ((name, value),) = switch.items()
    with pytest.raises(TypeError, match=rf"trace\({name}=...\) takes True or False, got "):
        trace(paddle.nn.Linear(2, 1), **switch)


@pytest.mark.parametrize("on", [True, 1, np.bool_(True)])
def test_bools_and_their_kin_are_taken(on):
    model = paddle.nn.Linear(2, 1)
    if not HAS_POST_HOOKS:  # 2.6 refuses stats=True: its refusal shows `on` was read as on
        with pytest.raises(StatsUnavailableError, match="upgrade to paddlepaddle>=3.0"):
            trace(model, stats=on, slots=None, call_sites=False)
        return
    with trace(model, stats=on, slots=None, call_sites=False):
        loss = model(paddle.randn([3, 2])).sum()
        loss.backward()
    edges = Graph.from_dict(build_graph(loss)).edges
    assert any(e.stats is not None for e in edges)  # the statistics were recorded
