"""The forward reading names each op after the forward op its GradNode differentiates
(js/view/forward.ts, the one implementation; js/view/forward.test.ts checks it against the
hand-written table tests/fixtures/forward_op_names.json). Here: every GradNode name that real
ResNet-18 and paddleformers Llama graphs hold, with and without recompute, is in that table, so
a Paddle version that names its nodes differently shows up here first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import paddle
import pytest
from llama_tiny import tiny_llama
from models import resnet18_output
from paddle_versions import requires_paddleformers

from paddleviz_widget import build_graph

TABLE = json.loads(
    (Path(__file__).parent / "fixtures" / "forward_op_names.json").read_text(encoding="utf-8")
)["names"]


def node_names(y: Any) -> set[str]:
    return {node["name"] for node in build_graph(y)["nodes"]}


def test_resnet18_names_are_known() -> None:
    _, y = resnet18_output()
    names = node_names(y)
    assert {"Conv2dGradNodeFinal", "BatchNormGradNode", "GradNodeAccumulation"} <= names
    assert names - TABLE.keys() == set()


@requires_paddleformers
@pytest.mark.parametrize("recompute", [False, True])
def test_llama_names_are_known(recompute: bool) -> None:
    paddle.seed(0)
    model, ids = tiny_llama(recompute=recompute)
    loss = model(ids, labels=ids)[0]
    names = node_names(loss)
    if recompute:
        assert "GradNodePyLayer_RecomputeFunction" in names
    else:
        assert {"EmbeddingGradNode", "SiluGradNode", "CrossEntropyWithSoftmaxGradNode"} <= names
    assert names - TABLE.keys() == set()
