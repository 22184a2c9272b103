"""Per-op Python stacks are asked of Paddle for a session's first backward passes only:
while FLAGS_call_stack_level is 3, Paddle keeps every op's traceback alive for good."""

from __future__ import annotations

import paddle
from models import lenet_output
from paddle_versions import requires_dump

from paddleviz_widget import build_graph, trace
from paddleviz_widget.tracer.capture.session import CALL_STACK_STEPS
from paddleviz_widget.tracer.capture.stack_gate import CALL_STACK_FLAG


def _level() -> int:
    return int(paddle.get_flags([CALL_STACK_FLAG])[CALL_STACK_FLAG])


# Per-op stacks are taken only where the backward dump reads them (3.3; bb25f).
@requires_dump
def test_stacks_stop_after_the_first_steps_and_the_flag_is_restored():
    before = _level()
    model, _ = lenet_output()
    levels = []
    with trace(model):
        for _ in range(CALL_STACK_STEPS + 2):
            levels.append(_level())
            y = model(paddle.randn([1, 3, 32, 32]))
            y.sum().backward()
        late = build_graph(y)  # a late step: ops show the line that called their layer
    assert levels[:CALL_STACK_STEPS] == [3] * CALL_STACK_STEPS
    assert levels[CALL_STACK_STEPS:] == [before] * 2
    assert _level() == before
    ops = [n for n in late["nodes"] if n.get("kind", "op") == "op"]
    assert ops and all("call_site" in n for n in ops)
