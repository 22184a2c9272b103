"""The per-layer table's parameter counts say what they count. From the graph alone
(GraphWidget.summary(), the Layers tab's rows) they are its parameter nodes: a frozen
Linear(3, 3)'s weight has none, and the table said "Total params: 46 (trainable 46)" of a
model of 55, unqualified, where summary(y, model=model) said 55. Oracle: the model's own
parameters' element counts."""

from __future__ import annotations

import math

import paddle
from paddle_versions import requires_post_hooks

from paddleviz_widget import GraphWidget, summary, trace


class PartlyFrozen(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.a = paddle.nn.Linear(4, 5)
        self.head = paddle.nn.Linear(5, 3)
        self.head.weight.stop_gradient = True  # frozen: no node in the backward graph

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.head(self.a(x))


def _traced(model: paddle.nn.Layer, x: paddle.Tensor | None = None) -> paddle.Tensor:
    """One forward and backward of ``model`` under trace(model, stats=True): its output."""
    with trace(model, stats=True):
        y = model(paddle.randn([2, 4]) if x is None else x)
        y.sum().backward()
    return y


def _numel(layer: paddle.nn.Layer) -> tuple[int, int]:
    """(elements, trainable elements) of a layer's parameters, its sublayers' included."""
    sizes = [(math.prod(p.shape), not p.stop_gradient) for p in layer.parameters()]
    return sum(n for n, _ in sizes), sum(n for n, t in sizes if t)


@requires_post_hooks  # trace(stats=True) lists the parameters without a node
def test_a_frozen_weight_counts_in_its_layer_and_the_totals():
    paddle.seed(0)
    model = PartlyFrozen()
    y = _traced(model)
    every, trainable = _numel(model)

    whole = summary(y, model=model)  # the model's own counts: every parameter
    assert (whole.total_params, whole.trainable_params) == (every, trainable)
    assert str(whole).splitlines()[-1] == f"Total params: {every:,}  (trainable {trainable:,})"

    # From the graph alone: the frozen weight has no node, but the document names it and its
    # shape, so its layer's row ("Params 3" before) and the totals count it, unqualified.
    table = GraphWidget(y).summary()
    rows = {r.name: r for r in table.rows}
    assert (rows["head"].params, rows["head"].trainable) == _numel(model.head) == (18, 3)
    assert (rows["a"].params, rows["a"].trainable) == _numel(model.a)
    assert (table.total_params, table.trainable_params) == (every, trainable)
    assert str(table).splitlines()[-1] == f"Total params: {every:,}  (trainable {trainable:,})"
    assert "counting" not in table._repr_html_()


class UnusedBranch(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.used = paddle.nn.Linear(4, 4)
        self.spare = paddle.nn.Sequential(paddle.nn.Linear(4, 6), paddle.nn.Linear(6, 2))
        self.scale = self.create_parameter([4])  # the model's own parameter, unused

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.used(x)


@requires_post_hooks  # trace(stats=True) lists the parameters without a node
def test_an_unused_branch_counts_in_the_model_though_its_layers_have_no_rows():
    paddle.seed(0)
    model = UnusedBranch()
    y = _traced(model)
    every, trainable = _numel(model)
    table = GraphWidget(y).summary()
    rows = {r.name: r for r in table.rows}
    assert "spare" not in rows  # no GradNode of it: no row, but the model's total has it
    assert (rows["UnusedBranch"].params, rows["UnusedBranch"].trainable) == (every, trainable)
    assert (table.total_params, table.trainable_params) == (every, trainable)
    assert table.counting == ""


def test_without_the_models_word_the_counts_say_they_are_the_graphs():
    paddle.seed(0)
    model = PartlyFrozen()
    with trace(model):  # no stats: the document does not list the parameters without a node
        y = model(paddle.randn([2, 4]))
    table = GraphWidget(y).summary()
    in_graph = _numel(model)[1]
    assert table.total_params == in_graph
    assert str(table).splitlines()[-1] == (
        f"Total params: {in_graph:,}  (trainable {in_graph:,}), counting the parameters in "
        "this graph"
    )


@requires_post_hooks  # trace(stats=True) lists the parameters without a node
def test_a_document_without_shapes_says_what_its_counts_leave_out():
    # A document written before the shapes were: its frozen weight is named but not sized.
    paddle.seed(0)
    model = PartlyFrozen()
    y = _traced(model)
    doc = GraphWidget(y).graph
    for entry in doc["meta"]["unreached_params"]:
        del entry["shape"]
    table = GraphWidget.from_graph(doc).summary()
    assert table.total_params == _numel(model)[1]
    assert "some it does not (frozen, unreached or recomputed) are left out" in str(table)


class Recomputed(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.inner = paddle.nn.Linear(4, 4)
        self.head = paddle.nn.Linear(4, 2)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        from paddle.distributed.fleet.utils import recompute

        return self.head(recompute(self.inner, x))


@requires_post_hooks  # trace(stats=True) lists the parameters without a node
def test_parameters_recompute_hides_count_in_the_layer_it_recomputes():
    paddle.seed(0)
    model = Recomputed()
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    y = _traced(model, x)
    table = GraphWidget(y).summary()
    rows = {r.name: r for r in table.rows}
    assert (rows["inner"].params, rows["inner"].trainable) == _numel(model.inner)
    assert (table.total_params, table.trainable_params) == _numel(model)
