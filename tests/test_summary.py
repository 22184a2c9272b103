"""summary(y): the per-layer table of the backward graph, checked against counts computed here
from the model's own parameters and against the graph's edges."""

from __future__ import annotations

import math

import paddle
import pytest
from models import lenet_output
from paddle_versions import requires_vlog_switch

from paddleviz_widget import summary, trace


def _counts(layer: paddle.nn.Layer) -> tuple[int, int]:
    sizes = [(math.prod(p.shape), not p.stop_gradient) for p in layer.parameters()]
    return sum(s for s, _ in sizes), sum(s for s, t in sizes if t)


@pytest.mark.parametrize("traced", [True, False])
def test_parameter_counts_equal_the_models_own(traced):
    paddle.seed(0)
    model, _ = lenet_output()
    model.fc[4].bias.stop_gradient = True  # frozen: counted, not trainable
    if traced:
        with trace(model):
            y = model(paddle.randn([1, 3, 32, 32]))
            y.sum().backward()
    else:
        y = model(paddle.randn([1, 3, 32, 32]))
    table = summary(y, model=model)
    layers = dict(model.named_sublayers())
    for row in table.rows:
        layer = model if row.depth == 0 else layers[row.name]
        assert (row.params, row.trainable) == _counts(layer), row.name
    assert (table.total_params, table.trainable_params) == _counts(model)
    assert table.trainable_params == table.total_params - 10


@requires_vlog_switch
def test_gradient_shapes_in_and_out_of_a_layer():
    paddle.seed(0)
    model, _ = lenet_output()
    with trace(model):
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward()
    rows = {r.name: r for r in summary(y).rows}  # the model is found by itself
    # fc.2 = Linear(120, 84): the gradient of its output comes in, of its input goes out.
    assert rows["fc.2"].grads_in == ("float32[1, 84]",)
    assert rows["fc.2"].grads_out == ("float32[1, 120]",)
    assert rows["fc.4"].grads_in == ("float32[1, 10]",)  # the loss's gradient of y
    assert rows["fc.2"].grad_nodes == 2 and rows["fc.2"].params == 120 * 84 + 84


def test_text_and_html_show_every_layer_and_escape_names():
    paddle.seed(0)
    model, y = lenet_output()
    table = summary(y, model=model)
    text = str(table)
    for row in table.rows:
        assert row.name in text
    assert text.splitlines()[-1].startswith("Total params: 81,302")
    page = table._repr_html_()
    assert page.count("<tr>") == len(table.rows) + 1
    hostile = table.rows[0].__class__(**{**table.rows[0].__dict__, "name": "<b>x</b>"})
    table.rows[0] = hostile
    assert "<b>x</b>" not in table._repr_html_() and "&lt;b&gt;x&lt;/b&gt;" in table._repr_html_()
