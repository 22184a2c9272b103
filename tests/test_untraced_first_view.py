"""The first view of a graph built without ``trace()`` after backward: a model that calls its
residual blocks from its own forward gets the ops of the residual stream (and the norms'
parameterless arithmetic on it) placed at its own level (tracer/merge/param_groups.py: the
anchors upstream reach the embedding), too many to read there, so the model starts closed
(js/view/auto_open.ts); traced, the same model opens to its folded blocks. (paddleformers'
Llama ties its embedding, whose shared weight anchors nothing: its stream lands in
``model.layers``, one level down, and its first view is within the budget as before.)"""

from __future__ import annotations

import paddle
import pytest
from paddle import nn

from paddleviz_widget import build_graph, trace
from paddleviz_widget.export.view_rules import static_view

BLOCKS = 40  # 5 ops a block at the model's level untraced: 200, over the first view's 150


class RMSNorm(nn.Layer):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.weight = self.create_parameter(
            [width], default_initializer=nn.initializer.Constant(1.0)
        )

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return x * paddle.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Block(nn.Layer):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = RMSNorm(width)
        self.fc = nn.Linear(width, width)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return x + self.fc(self.norm(x))


class Residual(nn.Layer):
    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.embed = nn.Linear(8, width)
        self.blocks = nn.LayerList([Block(width) for _ in range(BLOCKS)])
        self.head = nn.Linear(width, 1)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)


@pytest.fixture
def model_and_input():
    paddle.seed(0)
    return Residual(), paddle.randn([4, 8])


def _root_and_level(doc: dict) -> tuple[str, int]:
    (root,) = [g["id"] for g in doc["groups"] if not g.get("parent")]
    return root, sum(1 for n in doc["nodes"] if n.get("group") == root)


def test_untraced_the_model_starts_closed(model_and_input):
    model, x = model_and_input
    out = model(x)
    out.mean().backward()  # the graph freed: built afterwards, untraced
    doc = build_graph(out, model=model)  # the model's output: every node in the model
    root, at_root = _root_and_level(doc)
    assert at_root > 150, at_root  # what depth 0 would show, beside the blocks' calls
    view = static_view(doc)
    assert (view.depth, view.expanded, view.visible) == (-1, [], [root])
    assert "showing 1 node (1 collapsed group)" in view.counts, view.counts
    # Asked for, depth 0 still opens it.
    assert static_view(doc, depth=0).expanded == [root]


def test_traced_the_same_model_opens_to_its_folded_blocks(model_and_input):
    model, x = model_and_input
    with trace(model):
        out = model(x)
        out.mean().backward()
    doc = build_graph(out)
    root, at_root = _root_and_level(doc)
    assert at_root < 10, at_root
    view = static_view(doc)
    assert view.depth >= 1 and root in view.expanded and len(view.visible) <= 20, view
