"""A finding named by its layer alone (an exploding layer with no op of its own that has a
factor: paddle.vision's InceptionV3 blocks, whose own ops are concats, whose gradients hooks
cannot see) printed the layer twice ("exploding  inception_block_list.9 /
inception_block_list.9: ..."), its few-value BatchNorm note listed every such BatchNorm of
the model (another block's first), and it kept the "weights grown too large?" guess that
note contradicts."""

from __future__ import annotations

import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import GraphWidget, trace
from paddleviz_widget.graph.problems import Problem

pytestmark = requires_post_hooks  # trace(stats=True)


@pytest.fixture(scope="module")
def by_layer() -> list[Problem]:
    paddle.seed(0)
    model = paddle.vision.models.inception_v3(num_classes=10)
    x = paddle.randn([2, 3, 75, 75])  # 1x1 at the last blocks: BatchNorm over 2 values
    with trace(model, stats=True):
        loss = model(x).square().mean()
        loss.backward()
    found = GraphWidget(loss, model=model).problems()
    named = [p for p in found if p.kind == "exploding" and p.name == p.layer]
    assert named, [p.to_dict() for p in found]  # the case these tests are about
    return named


def test_a_layer_named_finding_names_its_layer_once(by_layer: list[Problem]) -> None:
    for p in by_layer:
        assert p.line().startswith(f"exploding  {p.layer}: "), p.line()


def test_it_lists_only_its_own_few_value_batchnorms(by_layer: list[Problem]) -> None:
    for p in by_layer:
        named = p.reason.split("per channel (")[1].split(";")[0].replace(" and ", ", ")
        listed = [n for n in named.split(", ") if not n[0].isdigit()]  # not "7 more"
        assert listed and all(n.startswith(f"{p.layer}.") for n in listed), (p.layer, listed)
        assert "grown too large" not in p.reason and "normalisation" in p.reason
