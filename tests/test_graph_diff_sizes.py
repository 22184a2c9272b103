"""Two steps of the same model on inputs of another size (the last, smaller batch of an
epoch; another sequence length): every activation's gradient changes shape, and the diff says
once that this is what another input size makes, so the marks are not read as a changed
model. Real Paddle models; the sizes are the test's own."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn as nn
import pytest
from paddle_versions import HAS_PADDLEFORMERS

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph.diff import diff_graphs, diff_summary


def graph(model: nn.Layer, x: paddle.Tensor) -> dict[str, Any]:
    with trace(model):
        y = model(x)
        y = y if isinstance(y, paddle.Tensor) else y[0]
        y.mean().backward()
    model.clear_gradients()
    return build_graph(y)


def sizes_notice(doc: dict[str, Any]) -> str | None:
    lines = doc["meta"].get("notices") or [doc["meta"].get("notice")]
    return next((n for n in lines if n and "what inputs of another size" in n), None)


def test_a_smaller_last_batch_is_said_once_and_still_marked() -> None:
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    doc = diff_graphs(
        graph(model, paddle.randn([32, 8])), graph(model, paddle.randn([17, 8])),
        labels=("step 99", "step 100"), stats=False,
    )  # fmt: skip
    notice = sizes_notice(doc)
    assert notice is not None and "32 in 'step 99' -> 17 in 'step 100'" in notice
    assert doc["meta"]["notice"] == notice  # said first
    summary = diff_summary(doc)
    assert summary["counts"]["changed"]["edges"] > 0  # the marks themselves stay


@pytest.mark.skipif(not HAS_PADDLEFORMERS, reason="paddleformers is not installed")
def test_another_sequence_length_of_a_llama() -> None:
    from llama_tiny import tiny_llama

    model, ids = tiny_llama(layers=2)
    doc = diff_graphs(graph(model, ids), graph(model, ids[:, :6]), stats=False)
    notice = sizes_notice(doc)
    assert notice is not None and "8 in 'a' -> 6 in 'b'" in notice


def test_no_such_notice_when_the_model_changed_shape_or_nothing_changed() -> None:
    x = paddle.randn([4, 8])
    narrow = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    wide = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    assert sizes_notice(diff_graphs(graph(narrow, x), graph(wide, x))) is None
    assert sizes_notice(diff_graphs(graph(narrow, x), graph(narrow, x))) is None
