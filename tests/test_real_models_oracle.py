"""Real model code, both paths, against Paddle's own dump of the user's backward.

Models from Paddle's ecosystem, not written for these tests: paddleformers' Llama (with and
without recompute) and paddle.vision's ResNet-18 as a saliency map (the input image wants a
gradient); plus the two leaf kinds the replay cannot name by parameter: an input leaf and a
buffer filled in place (MoE-style ``index_add_``).

Traced path: forward and backward inside ``trace()``; every edge equals the dump.
Replay path: the graph is built before backward(); every annotated edge equals the dump and
an edge left bare comes with a notice that says why ("right or absent").
"""

from __future__ import annotations

import collections
from typing import Any

import paddle
import paddle.nn as nn
import pytest
from dump_reader import BackwardDump
from graph_dicts import nested
from llama_tiny import tiny_llama
from oracle_models import assert_matches_dump, edge_grads, read_dump
from paddle_versions import requires_dump, requires_paddleformers

from paddleviz_widget import build_graph, trace


def _llama(recompute: bool) -> Any:
    def run() -> tuple[nn.Layer, Any]:
        model, ids = tiny_llama(recompute=recompute)
        return model, lambda: model(ids)[0].astype("float32").square().mean(), None

    return run


def _saliency() -> tuple[nn.Layer, Any, Any]:
    model = paddle.vision.models.resnet18(num_classes=10)
    image = paddle.randn([2, 3, 64, 64])
    image.stop_gradient = False  # a saliency map is the gradient of a score w.r.t. the image
    return model, lambda: model(image).max(axis=1).sum(), image


class MoeRouting(nn.Layer):
    """Tokens scattered into per-expert slots with index_add_ on a buffer made in forward."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(8, 8)
        self.expert = nn.Linear(8, 8)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        routed = paddle.zeros([3, 8])
        routed.index_add_(paddle.to_tensor([0, 2, 1, 0, 2]), 0, self.gate(x))
        return self.expert(routed).sum()


def _moe() -> tuple[nn.Layer, Any, Any]:
    model = MoeRouting()
    x = paddle.randn([5, 8])
    return model, lambda: model(x), None


CASES = {
    "llama": _llama(False),
    "llama_recompute": _llama(True),
    "resnet18_saliency": _saliency,
    "moe_index_add_buffer": _moe,
}
CASE_PARAMS = [
    pytest.param(c, marks=requires_paddleformers) if c.startswith("llama") else c
    for c in sorted(CASES)
]


def _right_or_absent(graph: dict[str, Any], dump: BackwardDump) -> int:
    """Same nodes and edges as the dump; each annotated edge equals the dump's gradient for
    it. Returns how many edges are bare."""
    nodes = {n["ptr"]: n["name"] for n in graph["nodes"]}
    assert nodes == dump.nodes
    ptr = {n["id"]: n["ptr"] for n in graph["nodes"]}
    ours = collections.Counter((ptr[e["source"]], ptr[e["target"]]) for e in graph["edges"])
    assert ours == collections.Counter((e.source, e.target) for e in dump.edges)
    expected: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for e in dump.edges:
        assert e.grad is not None
        expected[(e.source, e.target)].append(f"{e.grad.dtype}{list(e.grad.shape)}@{e.grad.place}")
    bare = 0
    for key, labels in edge_grads(graph).items():
        known = [x for x in labels if not x.startswith("None")]
        bare += len(labels) - len(known)
        leftover = list(expected[key])
        for label in known:
            # A parameter-shaped edge knows dtype and shape, not the place: compare what it has.
            found = [x for x in leftover if x == label or x.split("@")[0] + "@None" == label]
            assert found, f"{nodes[key[0]]} -> {nodes[key[1]]}: {label} not in {expected[key]}"
            leftover.remove(found[0])
    return bare


@requires_dump
@pytest.mark.parametrize("case", CASE_PARAMS)
def test_traced_graph_equals_the_dump(case, tmp_path):
    paddle.seed(0)
    model, loss_of, _ = CASES[case]()
    with trace(model):
        loss = loss_of()
        loss.backward(dump_backward_graph_path=str(tmp_path))
    graph = nested(build_graph(loss))
    assert_matches_dump(graph, read_dump(tmp_path))


@requires_dump
@pytest.mark.parametrize("case", CASE_PARAMS)
def test_replayed_graph_is_right_or_absent(case, tmp_path):
    paddle.seed(0)
    model, loss_of, image = CASES[case]()  # `image`: the user's variable, as in a notebook
    loss = loss_of()
    graph = nested(build_graph(loss))
    del image
    loss.backward(dump_backward_graph_path=str(tmp_path))
    bare = _right_or_absent(graph, read_dump(tmp_path))
    notice = graph["meta"].get("notice") or ""
    if case in ("llama", "resnet18_saliency"):  # every leaf is a parameter or a variable here
        assert bare == 0 and not notice
    elif case == "moe_index_add_buffer":
        assert bare == 1 and "leaf tensors that are not parameters" in notice
    else:  # recompute: a PyLayer, not replayed; only parameter-shaped edges are known
        assert bare > 0 and "PyLayer" in notice


def test_the_saliency_input_is_named_and_its_edge_has_the_image_shape(tmp_path):
    """Regression: the replay gave the image's edge the conv weight's shape [64, 3, 7, 7]."""
    paddle.seed(0)
    model = paddle.vision.models.resnet18(num_classes=10)
    image = paddle.randn([2, 3, 64, 64])
    image.stop_gradient = False
    graph = nested(build_graph(model(image).max(axis=1).sum()))
    leaf = next(n for n in graph["nodes"] if (n["param"] or {}).get("name") == "image")
    into = [e for e in graph["edges"] if e["target"] == leaf["id"]]
    assert [e["grad"]["shape"] for e in into] == [[2, 3, 64, 64]]


@requires_dump
def test_an_input_leaf_nobody_can_name_is_left_bare_with_a_notice():
    paddle.seed(0)
    conv = nn.Conv2D(3, 4, 3)

    def forward() -> paddle.Tensor:  # the input lives only in here: no variable names it
        x = paddle.randn([2, 3, 8, 8])
        x.stop_gradient = False
        return conv(x).mean()

    graph = nested(build_graph(forward()))
    conv_node = next(n for n in graph["nodes"] if n["name"].startswith("Conv2d"))
    out = {e["index"]: e for e in graph["edges"] if e["source"] == conv_node["id"]}
    assert out[0]["grad"] is None  # the input: absent, not the weight's shape
    assert out[1]["grad"]["shape"] == [4, 3, 3, 3]
    assert "leaf tensors that are not parameters" in graph["meta"]["notice"]
