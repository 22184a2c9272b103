"""BatchNorm over a few values per channel (ResNet-18 at 32x32 reaches 1x1 in layer4): at
batch 2 the parameters' gradients are ~2000x those at 64x64, at batch 1 layer4's BatchNorm
weights and biases get zero gradients. Real (p.grad says the same), so the findings stay; they
must say why (it was "far above healthy scale" and "dead ReLUs?"), and a realistic size must
give none (no false alarm)."""

from __future__ import annotations

import math

import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import build_graph, trace

pytestmark = requires_post_hooks  # trace(stats=True)


def _run(batch: int, size: int) -> tuple[dict, dict[str, float]]:
    paddle.seed(0)
    model = paddle.vision.models.resnet18(num_classes=10)
    x = paddle.randn([batch, 3, size, size])
    label = paddle.randint(0, 10, [batch, 1])
    with trace(model, stats=True):
        loss = paddle.nn.functional.cross_entropy(model(x), label)
        loss.backward()
        doc = build_graph(loss)
    params = model.named_parameters()
    grads = {n: float(paddle.linalg.norm(p.grad)) for n, p in params if p.grad is not None}
    return doc, grads


def test_batch_2_at_1x1_names_the_batchnorms_behind_the_exploding_total() -> None:
    doc, grads = _run(2, 32)
    total = math.sqrt(sum(g * g for g in grads.values()))
    assert total > 1e5  # real: p.grad's own total norm
    (problem,) = [p for p in doc["meta"]["problems"] if p["kind"] == "exploding"]
    assert problem["name"] == "total gradient norm"
    assert f"norm is {total:.3g}," in problem["reason"]  # the number p.grad gives
    assert "5 BatchNorm layers normalise over only 2 values per channel" in problem["reason"]
    assert "layer4.1.bn2" in problem["reason"] and "[2, 512, 1, 1]" in problem["reason"]


def test_batch_1_at_1x1_says_why_the_batchnorm_parameters_get_zeros() -> None:
    doc, grads = _run(1, 32)
    zero = {p["name"]: p["reason"] for p in doc["meta"]["problems"] if p["kind"] == "zero"}
    assert zero == {n: zero[n] for n, g in grads.items() if g == 0.0}  # p.grad's zeros, only
    assert set(zero) >= {"layer4.1.bn2.weight", "layer4.1.bn2.bias"}
    for reason in zero.values():
        assert "dead ReLU" not in reason
        assert "BatchNorm normalises over only 1 value per channel" in reason


@pytest.mark.parametrize(("batch", "size"), [(2, 64), (16, 32)])
def test_a_realistic_size_finds_nothing(batch: int, size: int) -> None:
    doc, _ = _run(batch, size)
    assert [p for p in doc["meta"].get("problems", []) if p["severity"] == "problem"] == []
