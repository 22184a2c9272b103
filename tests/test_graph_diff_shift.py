"""GraphWidget.diff of two versions of a real Paddle model where a layer was inserted into a
container named by position (nn.Sequential, a ResNet stage, a LayerList): every later layer's
name shifts by one ("3" becomes "4"), and the diff still shows the one layer the test inserted
as added and the rest matched (graph/diff_align.py). The oracle is the test's own knowledge of
which layer of b is which of a, and Paddle's own .grad for what changed."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import paddle
import paddle.nn as nn
import pytest
from paddle_versions import HAS_PADDLEFORMERS, requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import validate_graph_dict
from paddleviz_widget.graph.diff import diff_graphs, diff_summary


def graph(model: nn.Layer, x: paddle.Tensor, *, stats: bool = False) -> dict[str, Any]:
    with trace(model, stats=stats):
        y = model(x)
        y = y if isinstance(y, paddle.Tensor) else y[0]
        y.sum().backward()
    return build_graph(y)


def diffed(a: dict[str, Any], b: dict[str, Any], **options: Any) -> dict[str, Any]:
    doc = diff_graphs(a, b, **options)
    validate_graph_dict(doc)
    return diff_summary(doc)


def layers_of(doc: dict[str, Any], pred: Any) -> set[str]:
    """The ops and parameters of ``doc`` whose layer path satisfies ``pred``."""
    path = {g["id"]: g["name"] for g in doc["groups"]}
    return {n["id"] for n in doc["nodes"] if pred(path.get(n.get("group"), ""))}


def nodes(summary: dict[str, Any], status: str) -> list[dict[str, Any]]:
    return [e for e in summary[status] if e["kind"] == "node"]


def stack() -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(),
        nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4),
    )  # fmt: skip


def with_inserted(model: nn.Sequential, at: int, layer: nn.Layer) -> nn.Sequential:
    """The same layer objects (same weights), ``layer`` inserted at position ``at``."""
    kept = list(model)
    return nn.Sequential(*kept[:at], layer, *kept[at:])


def test_a_layer_inserted_into_a_sequential_is_the_one_difference() -> None:
    paddle.seed(5)
    a_model = stack()
    b_model = with_inserted(a_model, 3, nn.LayerNorm(8))
    x = paddle.randn([2, 8])
    a, b = graph(a_model, x), graph(b_model, x)
    summary = diffed(a, b)
    added = nodes(summary, "added")
    # exactly the LayerNorm's own nodes (its op, its weight and bias), each in layer "3"
    inserted = layers_of(b, lambda p: p == "3")
    assert len(added) == len(inserted) == 3
    assert {e["layer"] for e in added} == {"3"}
    assert {e["param"] for e in added if "param" in e} == {"3.weight", "3.bias"}
    assert not nodes(summary, "removed") and not summary["changed"]
    # the gradient the Tanh (a's "3", b's "4": a matched node is named as in b) sent into
    # layer 2 now goes into the LayerNorm: that edge only
    (gone,) = summary["removed"]
    assert (gone["layer"], gone["to_layer"]) == ("4", "2")
    # what moved: every layer after the inserted one, one place on
    assert summary["moved"] == [["3", "4"], ["4", "5"], ["5", "6"], ["6", "7"]]
    # and the other way round: the LayerNorm taken out is one removed layer
    back = diffed(b, a)
    assert {e["layer"] for e in nodes(back, "removed")} == {"3"}
    assert not nodes(back, "added") and not back["changed"]


def test_a_layer_without_gradients_inserted_shifts_names_and_changes_nothing() -> None:
    # nn.Identity makes no GradNode: the graph has no layer "2", only the shift it caused
    paddle.seed(4)
    a_model = stack()
    b_model = with_inserted(a_model, 2, nn.Identity())
    x = paddle.randn([2, 8])
    summary = diffed(graph(a_model, x), graph(b_model, x))
    assert not (summary["added"] or summary["removed"] or summary["changed"]), summary
    assert summary["moved"] == [[str(k), str(k + 1)] for k in range(2, 7)]


def test_a_sequential_with_a_layer_inserted_and_another_widened() -> None:
    # the insertion does not hide a real change after it: b's "5" (a's "4") is wider
    paddle.seed(6)
    a_model = stack()
    b_model = copy.deepcopy(a_model)
    b_model = nn.Sequential(
        *list(b_model)[:1], nn.Linear(8, 8), *list(b_model)[1:4],
        nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4),
    )  # fmt: skip
    x = paddle.randn([2, 8])
    summary = diffed(graph(a_model, x), graph(b_model, x))
    assert {e["layer"] for e in nodes(summary, "added")} == {"1"}
    assert not nodes(summary, "removed")
    shapes = {
        e["param"]: [c for c in e["changes"] if c["field"] == "shape"]
        for e in nodes(summary, "changed")
        if "param" in e
    }
    assert {k: (v[0]["a"], v[0]["b"]) for k, v in shapes.items()} == {
        "5.weight": ([8, 8], [8, 16]),
        "5.bias": ([8], [16]),
        "7.weight": ([8, 4], [16, 4]),
    }


@requires_post_hooks
def test_after_an_insertion_matched_layers_show_their_gradient_changes() -> None:
    # The inserted Linear doubles what reaches the later layers: each matched parameter is
    # marked changed exactly when Paddle's own .grad of it moved beyond rtol.
    paddle.seed(7)
    a_model = stack()
    double = nn.Linear(8, 8)
    double.weight.set_value(2 * paddle.eye(8))
    double.bias.set_value(paddle.zeros([8]))
    b_model = with_inserted(a_model, 3, double)
    x = paddle.randn([4, 8])
    a = graph(a_model, x, stats=True)
    grads_a = {n: p.grad.numpy().copy() for n, p in a_model.named_parameters()}
    a_model.clear_gradients()
    b = graph(b_model, x, stats=True)
    grads_b = {n: p.grad.numpy().copy() for n, p in b_model.named_parameters()}
    summary = diffed(a, b, rtol=0.1)
    assert {e["layer"] for e in nodes(summary, "added")} == {"3"}
    assert not nodes(summary, "removed")
    marked = {e["to_param"] for e in summary["changed"] if e["kind"] == "edge" and "to_param" in e}
    moved = {}
    for name, g in grads_a.items():
        at, rest = name.split(".", 1)
        other = grads_b[f"{int(at) + (int(at) >= 3)}.{rest}"]  # a's "4" is b's "5"
        va, vb = np.linalg.norm(g), np.linalg.norm(other)
        ma, mb = np.abs(g).max(), np.abs(other).max()
        moved[f"{int(at) + (int(at) >= 3)}.{rest}"] = max(
            abs(va - vb) / max(va, vb), abs(ma - mb) / max(ma, mb)
        )
    assert any(m > 0.2 for m in moved.values()) and any(m < 0.05 for m in moved.values())
    for name, move in moved.items():
        assert move > 0.12 or move < 0.08, (name, move)  # far from the tolerance
        assert (name in marked) == (move > 0.1), (name, move, marked)


def test_a_resnet_with_a_block_added_in_the_middle() -> None:
    from paddle.vision.models import resnet18
    from paddle.vision.models.resnet import BasicBlock

    paddle.seed(8)
    a_model = resnet18(num_classes=4)
    b_model = copy.deepcopy(a_model)
    # one more block at the front of layer3, before its downsampling one
    b_model.layer3 = with_inserted(b_model.layer3, 0, BasicBlock(128, 128))
    a_model.train(), b_model.train()
    x = paddle.randn([1, 3, 32, 32])
    a, b = graph(a_model, x), graph(b_model, x)
    summary = diffed(a, b)
    inserted = layers_of(b, lambda p: p == "layer3.0" or p.startswith("layer3.0."))
    added = nodes(summary, "added")
    assert len(added) == len(inserted) > 10
    assert all(e["layer"].startswith("layer3.0") for e in added)
    assert not nodes(summary, "removed")
    assert summary["moved"] == [["layer3.0", "layer3.1"], ["layer3.1", "layer3.2"]]
    # the block's batch norms' running statistics are no gradients: nothing else changed
    assert not summary["changed"], summary["changed"][:3]


@pytest.mark.skipif(not HAS_PADDLEFORMERS, reason="paddleformers is not installed")
def test_a_llama_with_one_more_decoder_layer() -> None:
    from llama_tiny import tiny_llama

    paddle.seed(9)
    a_model, ids = tiny_llama(layers=2)
    b_model, _ = tiny_llama(layers=3)
    a, b = graph(a_model, ids), graph(b_model, ids)
    summary = diffed(a, b)
    one = layers_of(b, lambda p: p == "model.layers.2" or p.startswith("model.layers.2."))
    added = nodes(summary, "added")
    assert len(added) == len(one) > 10
    assert not nodes(summary, "removed") and not summary["changed"]
    assert summary["moved"] == []  # appended: no name shifted


def test_a_layer_replaced_by_another_type_in_its_place_stays_one_layer() -> None:
    # "1" a ReLU in a, a Tanh in b: no name shifted; one layer "1" whose op was replaced
    paddle.seed(10)
    a_model = stack()
    b_model = nn.Sequential(*[nn.Tanh() if k == 1 else m for k, m in enumerate(a_model)])
    x = paddle.randn([2, 8])
    doc = diff_graphs(graph(a_model, x), graph(b_model, x))
    assert [g["name"] for g in doc["groups"]].count("1") == 1
    summary = diff_summary(doc)
    assert [(e["layer"], e["op"]) for e in nodes(summary, "removed")] == [("1", "ReluGradNode")]
    assert [(e["layer"], e["op"]) for e in nodes(summary, "added")] == [("1", "TanhGradNode")]
    assert summary["moved"] == [] and not summary["changed"]


def test_vgg11_against_vgg11_bn_is_a_batch_norm_after_each_conv() -> None:
    # paddle.vision's two versions of one model: batch_norm=True puts a BatchNorm2D after
    # each of the 8 convolutions of `features`, shifting every later name in it
    from paddle.vision.models import vgg11

    paddle.seed(11)
    x = paddle.randn([1, 3, 32, 32])
    a_model, b_model = vgg11(num_classes=4), vgg11(batch_norm=True, num_classes=4)
    a, b = graph(a_model, x), graph(b_model, x)
    summary = diffed(a, b, stats=False)
    norms = {n for n, m in b_model.named_sublayers() if isinstance(m, nn.BatchNorm2D)}
    assert len(norms) == 8
    added = nodes(summary, "added")
    assert {e["layer"] for e in added} == norms
    assert len(added) == len(layers_of(b, lambda p: p in norms))
    assert not nodes(summary, "removed") and not summary["changed"]
