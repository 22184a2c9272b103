"""The Layers tab of a diff (export/layer_rows.py): graph b's table. A diff holds both graphs'
nodes; its table counted a's removed blocks' parameters into b's totals ("Total params:
3,876" for a model of 3,332: the seven-block model's count, shown for the six-block one). The
expected counts are the models' own (numel of their parameters)."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn as nn

from paddleviz_widget import build_graph, trace
from paddleviz_widget.export.layer_rows import layer_rows
from paddleviz_widget.graph.diff import diff_graphs


class Net(nn.Layer):
    def __init__(self, blocks: int, wide: bool = False) -> None:
        super().__init__()
        self.blocks = nn.LayerList([nn.Linear(8, 8) for _ in range(blocks)])
        self.head = nn.Linear(8, 6 if wide else 4)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for block in self.blocks:
            x = paddle.tanh(block(x))
        return self.head(x)


def traced(model: nn.Layer) -> dict[str, Any]:
    with trace(model):
        y = model(paddle.randn([2, 8]))
        y.sum().backward()
    return build_graph(y)


def size(layer: nn.Layer) -> int:
    return sum(int(p.numel()) for p in layer.parameters())


def test_the_layers_of_a_diff_are_its_second_graph_s() -> None:
    seven, six = Net(7), Net(6, wide=True)
    reply = layer_rows(diff_graphs(traced(seven), traced(six), labels=("seven", "six")))
    assert reply["total_params"] == reply["trainable_params"] == size(six) != size(seven)
    rows = {r["name"]: r for r in reply["rows"]}
    assert "blocks.6" not in rows and rows["blocks"]["params"] == size(six.blocks)
    assert rows["head"]["params"] == size(six.head)  # changed: b's shape
    assert (
        reply["note"]
        == "The layers of six, the diff's second graph; 1 layer only in seven left out."
    )
    plain = layer_rows(traced(seven))
    assert plain["total_params"] == size(seven) and "note" not in plain
