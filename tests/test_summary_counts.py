"""The per-layer table's parameter counts say what they count. From the graph alone
(GraphWidget.summary(), the Layers tab's rows) they are its parameter nodes: a frozen
Linear(3, 3)'s weight has none, and the table said "Total params: 46 (trainable 46)" of a
model of 55, unqualified, where summary(y, model=model) said 55. Oracle: the model's own
parameters' element counts."""

from __future__ import annotations

import math

import paddle

from paddleviz_widget import GraphWidget, summary, trace


class PartlyFrozen(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.a = paddle.nn.Linear(4, 5)
        self.head = paddle.nn.Linear(5, 3)
        self.head.weight.stop_gradient = True  # frozen: no node in the backward graph

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.head(self.a(x))


def test_counts_from_the_graph_say_so_and_how_many_they_leave_out():
    paddle.seed(0)
    model = PartlyFrozen()
    with trace(model, stats=True):
        y = model(paddle.randn([2, 4]))
        y.sum().backward()
    every = sum(math.prod(p.shape) for p in model.parameters())
    trainable = sum(math.prod(p.shape) for p in model.parameters() if not p.stop_gradient)
    in_graph = trainable  # the frozen weight has no node

    whole = summary(y, model=model)  # the model's own counts: every parameter
    assert (whole.total_params, whole.trainable_params) == (every, trainable)
    assert str(whole).splitlines()[-1] == f"Total params: {every:,}  (trainable {trainable:,})"

    table = GraphWidget(y).summary()
    assert table.total_params == in_graph < every
    last = str(table).splitlines()[-1]
    assert last.startswith(
        f"Total params: {in_graph:,}  (trainable {in_graph:,}), counting the "
        "parameters in this graph; 1 more is not in it (frozen or unreached)"
    )
    assert "counting the parameters in this graph" in table._repr_html_()
