"""A backward that raises inside trace() writes to the user's stderr what it writes untraced.

Paddle logs its error report (the C++ traceback, "Error Message Summary", the hint) at VLOG
level when a backward raises; under trace()'s log capture that report's lines were read as the
user's own output and written to their stderr: ~20 lines for the untraced one warning line,
after a user hook raised in backward(), and again from build_graph(y) on the graph that
backward had half freed (its quiet replay)."""

from __future__ import annotations

import contextlib
import re
import sys

import paddle
import paddle.nn as nn
import pytest
from paddle_versions import requires_vlog_switch
from test_stderr_capture import original_stderr, written

from paddleviz_widget import build_graph, trace

pytestmark = requires_vlog_switch


def _raising_backward(traced: bool, stats: bool = False) -> str:
    """What reaches stderr of: a backward whose user hook raises, then build_graph(y)."""
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    session = trace(model, stats=stats) if traced else None
    with original_stderr() as target:
        if session is not None:
            session.__enter__()
        try:
            h = model[0](paddle.randn([3, 6]))

            def boom(grad: paddle.Tensor) -> paddle.Tensor:
                raise RuntimeError("the user's hook")

            h.register_hook(boom)
            y = model[2](model[1](h)).sum()
            # Paddle's own wrapping of the hook's error, untraced too
            with contextlib.suppress(OSError):
                y.backward()
            build_graph(y)
        finally:
            if session is not None:
                session.__exit__(*sys.exc_info())
        text = written(target).decode(errors="replace")
    # glog's time and thread id differ run to run
    return re.sub(r"^([IWEF])\d{4} [\d:.]+ +\d+ ", r"\1 ", text, flags=re.M)


@pytest.mark.parametrize("stats", [False, True])
def test_a_raising_backward_prints_what_it_prints_untraced(stats):
    untraced = _raising_backward(traced=False)
    assert "While running Node" in untraced  # the one line Paddle writes (a warning)
    traced = _raising_backward(traced=True, stats=stats)
    assert traced == untraced


def test_the_graph_of_a_backward_that_raised_does_not_say_to_wrap_it_in_trace():
    """Its backward ran inside trace() and raised, so nothing was recorded and the graph is
    half freed; the notice said to "wrap forward and backward in trace()", as if it had not
    been."""
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    with trace(model):
        h = model[0](paddle.randn([3, 6]))
        h.register_hook(lambda grad: 1 / 0)
        y = model[2](model[1](h)).sum()
        with contextlib.suppress(OSError):
            y.backward()
        doc = build_graph(y)
    notice = doc["meta"]["notice"]
    assert "wrap forward and backward" not in notice, notice
    assert "already freed this graph" in notice and "raised" in notice, notice
