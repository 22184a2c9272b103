"""problems() of a graph whose edges partly have no statistics says why for each, where the
edge says it: a to_static program's inside (full graph) gives no notice line, so "the graph's
notices say why" pointed at nothing (round 16b). Real Paddle, real to_static programs."""

from __future__ import annotations

import paddle
import paddle.nn as nn
from paddle_versions import requires_paddle_33

from paddleviz_widget import GraphWidget, trace


class _Mlp(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 3)

    def forward(self, x):  # noqa: ANN001
        return self.b(paddle.tanh(self.a(x)))


@requires_paddle_33  # to_static programs opened as in 3.3
def test_edges_inside_a_compiled_program_are_said_unchecked_and_why():
    paddle.seed(0)
    model = _Mlp()
    compiled = paddle.jit.to_static(model, full_graph=True)
    with trace(model, stats=True):
        loss = compiled(paddle.randn([4, 8])).mean()
        loss.backward()
    w = GraphWidget(loss)
    inside = [e for e in w.graph["edges"] if e.get("no_stats")]
    assert inside  # (the document's own account: each such edge says why)
    text = str(w.problems())
    assert not w.graph["meta"].get("notice")  # no notice line to point at
    assert "notices" not in text
    assert f"{len(inside)} inside a compiled program: Paddle runs it as one GradNode" in text


@requires_paddle_33  # to_static programs opened as in 3.3
def test_a_program_whose_forward_ran_outside_the_trace_is_not_called_a_concat():
    """Its edges have no statistics because its forward was not seen (the program's receivers
    are unknown), not because it is a concat-like node, which the notice used to say."""
    paddle.seed(0)
    model = _Mlp()
    compiled = paddle.jit.to_static(model, full_graph=True)
    loss = compiled(paddle.randn([4, 8])).mean()  # the forward outside trace()
    with trace(model, stats=True):
        loss.backward()
    notices = GraphWidget(loss).graph["meta"]["notices"]
    assert not any("concat" in line for line in notices), notices
    assert any(
        line.startswith("1 to_static program node(s) ran their forward outside trace()")
        and "no statistics" in line
        for line in notices
    ), notices
