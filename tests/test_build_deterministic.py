"""The same graph gives the same document: ``build_graph`` twice on a fresh graph (each time a
replayed backward names the edges) must give byte-identical documents. It did not: a slot
whose tensor Paddle left unnamed carried Paddle's name for it, its address
(``Tensor_55de8a8a4d50``), a different temporary at each replay."""

from __future__ import annotations

import json

import paddle
import pytest
from oracle_models import transformer_and_input

from paddleviz_widget import build_graph


def _lenet() -> tuple[paddle.nn.Layer, paddle.Tensor]:
    return paddle.vision.models.LeNet(), paddle.randn([2, 1, 28, 28])


def _resnet() -> tuple[paddle.nn.Layer, paddle.Tensor]:
    return paddle.vision.models.resnet18(num_classes=4), paddle.randn([1, 3, 32, 32])


@pytest.mark.parametrize("make", [_lenet, _resnet, transformer_and_input])
def test_build_graph_twice_on_a_fresh_graph_gives_the_same_document(make) -> None:
    paddle.seed(0)
    model, x = make()
    y = model(x).mean()
    first = json.dumps(build_graph(y), sort_keys=True)
    second = json.dumps(build_graph(y), sort_keys=True)
    assert first == second
    assert "Tensor_" not in first  # no address passed off as a name
