"""recompute(self.block, h): a method of the model, not a sublayer. Its node lists as hidden
only the parameters that have no node of their own in the graph (the block's), not every
parameter of the model the method belongs to."""

from __future__ import annotations

import contextlib

import paddle
import paddle.nn as nn
import paddle.nn.functional as F
import pytest
from paddle.distributed.fleet.utils import recompute

from paddleviz_widget import build_graph, trace


class Net(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 8)
        self.fc3 = nn.Linear(8, 2)

    def block(self, h: paddle.Tensor) -> paddle.Tensor:
        return F.gelu(self.fc2(h))

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc3(recompute(self.block, self.fc1(x), use_reentrant=True))


@pytest.mark.parametrize("traced", [False, True])
def test_a_recomputed_method_hides_only_what_it_used(traced):
    paddle.seed(0)
    model = Net()
    with trace(model) if traced else contextlib.nullcontext():
        loss = model(paddle.randn([3, 6])).square().sum()
        if traced:
            loss.backward()
    doc = build_graph(loss)
    (entry,) = doc["meta"]["pylayers"]
    hidden = sorted(p["name"] for p in entry["hidden_params"])
    # The independent account: the parameters block() uses, and the ones the graph shows.
    assert hidden == ["fc2.bias", "fc2.weight"]
    shown = {n["param"]["name"] for n in doc["nodes"] if "param" in n}
    assert shown == {"fc1.weight", "fc1.bias", "fc3.weight", "fc3.bias"}
    notices = doc["meta"].get("notices") or [doc["meta"]["notice"]]
    assert any("1 layer(s) and 2 parameter(s)" in line for line in notices), notices
