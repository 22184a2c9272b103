"""An MoE expert that no token is routed to, called on the empty selection (the
Hugging Face-style loop: ``expert(hidden[top_x])`` for every expert), gets an all-zero
gradient through 0-element gradients. problems() called that a zero problem ("dead ReLUs,
... multiplied by zero") for every such expert each step, and, beside a real dead ReLU
elsewhere, merged those parameters into it as "fed all-zero inputs in the forward"; and the
0-element gradients (no statistics: nothing to have them of) were counted as edges "not
checked". Now they are information, with the cause said; the rest is unchanged.

Oracles: forward pre-hooks on the experts record how many rows each got; p.grad after the
traced backward says which gradients are zeros."""

from __future__ import annotations

import paddle
import paddle.nn as nn
import paddle.nn.functional as F
from paddle_versions import requires_post_hooks

from paddleviz_widget import GraphWidget, trace

pytestmark = requires_post_hooks  # trace(stats=True)


def _index_add_takes_no_rows() -> bool:
    try:
        paddle.index_add(paddle.zeros([2, 2]), paddle.zeros([0], "int64"), 0, paddle.zeros([0, 2]))
    except ValueError:  # Paddle 3.0: "The length of Input(Index) can't be 0", untraced too
        return False
    return True


# The routed rows added back with index_add where Paddle takes an empty index (3.3), else with
# scatter_nd_add, which 3.0 does: the expert is called on no rows either way.
INDEX_ADD = _index_add_takes_no_rows()


def _add_rows(out: paddle.Tensor, rows: paddle.Tensor, value: paddle.Tensor) -> paddle.Tensor:
    if INDEX_ADD:
        return paddle.index_add(out, rows, 0, value)
    return paddle.scatter_nd_add(out, rows.unsqueeze(-1), value)


class SparseMoe(nn.Layer):
    """Top-2 softmax router over 4 experts, each called on the tokens routed to it."""

    def __init__(self, d: int = 8, n: int = 4, weight_norm: bool = False) -> None:
        super().__init__()
        self.gate = nn.Linear(d, n)
        norm = nn.utils.weight_norm if weight_norm else (lambda layer: layer)
        self.experts = nn.LayerList(
            [nn.Sequential(norm(nn.Linear(d, 16)), nn.Silu(), nn.Linear(16, d)) for _ in range(n)]
        )

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        weights, chosen = paddle.topk(F.softmax(self.gate(x), axis=-1), 2, axis=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = paddle.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = paddle.nonzero(chosen == e, as_tuple=True)
            tok, slot = tok.reshape([-1]), slot.reshape([-1])
            w = paddle.gather_nd(weights, paddle.stack([tok, slot], -1)).unsqueeze(-1)
            out = _add_rows(out, tok, expert(paddle.gather(x, tok)) * w)
        return out


class Net(nn.Layer):
    def __init__(self, dead_side: bool, weight_norm: bool = False) -> None:
        super().__init__()
        self.inp = nn.Linear(8, 8)
        self.moe = SparseMoe(weight_norm=weight_norm)
        self.head = nn.Linear(8, 3)
        self.dead_side = dead_side
        if dead_side:  # a real problem beside it: a ReLU whose inputs are all negative
            self.dead = nn.Linear(8, 8)
            self.side = nn.Linear(8, 3)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        y = self.head(self.moe(self.inp(x)))
        return y + self.side(F.relu(self.dead(x))) if self.dead_side else y


def _run(dead_side: bool, weight_norm: bool = False):
    paddle.seed(0)
    model = Net(dead_side, weight_norm)
    with paddle.no_grad():
        model.moe.gate.bias[3] = -1e4  # a collapsed router: expert 3 never chosen
        if dead_side:
            model.dead.bias.set_value(paddle.full([8], -1e3))
    rows: dict[int, int] = {}
    for e, expert in enumerate(model.moe.experts):
        expert.register_forward_pre_hook(lambda _l, a, e=e: rows.__setitem__(e, a[0].shape[0]))
    x = paddle.randn([5, 8])
    with trace(model, stats=True):
        loss = model(x).square().mean()
        loss.backward()
    assert rows[3] == 0 and all(rows[e] > 0 for e in (0, 1, 2))  # the case under test
    zero = {n for n, p in model.named_parameters() if not p.grad.abs().max().item()}
    return GraphWidget(loss, model=model).problems(), zero


EXPERT_3 = {f"moe.experts.3.{i}.{w}" for i in (0, 2) for w in ("weight", "bias")}


def test_an_expert_given_no_token_is_information_not_a_problem() -> None:
    found, zero = _run(dead_side=False)
    assert zero == EXPERT_3  # p.grad: exactly expert 3's parameters are zeros
    assert [p.line() for p in found if p.severity == "problem"] == []
    info = {p.name: p for p in found if p.severity == "info"}
    assert set(info) == EXPERT_3
    assert all("empty input" in p.reason and p.kind == "zero" for p in info.values())
    assert str(found).startswith("No problems found in this graph's gradients.\n")


def test_a_dead_relu_beside_it_does_not_take_the_experts_zeros() -> None:
    found, zero = _run(dead_side=True)
    dead = {"dead.weight", "dead.bias", "side.weight"}
    assert zero == EXPERT_3 | dead
    (relu,) = [p for p in found if p.severity == "problem"]
    assert set(relu.affected) == dead, relu.line()
    assert {p.name for p in found if p.severity == "info"} == EXPERT_3


def test_a_weight_normed_expert_given_no_token_is_information_too() -> None:
    """Its weight_g and weight_v get their zeros through the weight norm's own ops (fed the
    matmul's weight-shaped zero gradient), not from a 0-element gradient directly."""
    found, zero = _run(dead_side=False, weight_norm=True)
    expected = {f"moe.experts.3.0.{w}" for w in ("weight_g", "weight_v", "bias")}
    expected |= {"moe.experts.3.2.weight", "moe.experts.3.2.bias"}
    assert zero == expected  # p.grad
    assert [p.line() for p in found if p.severity == "problem"] == []
    assert {p.name for p in found if p.severity == "info"} == expected
