"""diff_summary's edge entries name the layer of the op they go into (``to_layer``), not only
the layer they leave. A residual block's Add sends its gradient to the block before and into
its own sub-layer: both entries read ``{"layer": "blocks.2", "op": "AddGradNode", "to":
"AddGradNode"}`` and only their slots (grad_x, grad_y) told them apart. Checked on two real
training steps; the expected layers are the model's own. And a gradient gone NaN lists its
NaN count first (its norm, of the finite values, read as a gradient that vanished)."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn as nn
from paddle_versions import requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph.diff import diff_graphs, diff_summary


class Block(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return x + self.fc(x)


class Net(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.LayerList([Block() for _ in range(3)])

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


def step(model: Net, x: paddle.Tensor) -> dict[str, Any]:
    with trace(model, stats=True):
        y = model(x)
        (y * y).sum().backward()
    return build_graph(y)


@requires_post_hooks
def test_each_edge_entry_names_the_layer_it_goes_into() -> None:
    paddle.seed(4)
    model, x = Net(), paddle.randn([2, 8])
    opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=model.parameters())
    a = step(model, x)
    opt.step()
    opt.clear_grad()
    b = step(model, x)
    summary = diff_summary(diff_graphs(a, b, rtol=0.0))
    edges = [e for e in summary["changed"] if e["kind"] == "edge"]
    # Block 2's residual Add (x + fc(x)) sends dL/dx to block 1's residual Add and into fc's
    # bias add: two changed gradients (every gradient moved, rtol 0) out of one layer.
    out_of_block = [e for e in edges if e["layer"] == "blocks.2" and e["to"] == "AddGradNode"]
    assert sorted(e["to_layer"] for e in out_of_block) == ["blocks.1", "blocks.2.fc"]


@requires_post_hooks
def test_a_gradient_gone_nan_lists_its_nan_count_first() -> None:
    # A step fed an Inf: its gradients' norms (of their finite values) drop, often to 0; the
    # NaN/Inf counts are what changed, and come first, as the page reads them.
    paddle.seed(5)
    model, x = Net(), paddle.randn([2, 8])
    a = step(model, x)
    model.clear_gradients()
    bad = paddle.where(paddle.arange(16).reshape([2, 8]) == 0, paddle.full_like(x, float("inf")), x)
    b = step(model, bad)
    nans = int(paddle.isnan(model.blocks[0].fc.weight.grad).sum())
    summary = diff_summary(diff_graphs(a, b))
    entry = next(e for e in summary["changed"] if e.get("to_param") == "blocks.0.fc.weight")
    assert entry["changes"][0] == {"field": "nan", "a": 0, "b": nans} and nans > 0
