"""Tiny models for the trace() oracle tests, and the comparison with Paddle's own dump.

Each ``Case`` runs its forward *and* the backward the user would write, passing the test's own
``dump_backward_graph_path`` to that backward; ``run`` returns what backward was called on
(a tensor, or the list given to ``paddle.autograd.backward``). Tensors a check needs later are
kept in ``Case.kept`` (which also keeps their GradNodes alive, so no address is reused).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paddle
import paddle.nn as nn
import paddle.nn.functional as F
from dump_reader import BackwardDump, DumpEdge, read_dump_dir
from models import LeNet

from paddleviz_widget.tracer.read.grad_node import grad_node_of


@dataclass
class Case:
    model: nn.Layer
    run: Callable[[str], Any]  # dump dir -> the tensor(s) backward was called on
    kept: dict[str, Any] = field(default_factory=dict)


def _sum_backward(model: nn.Layer, *inputs: paddle.Tensor) -> Case:
    def run(dump_dir: str) -> paddle.Tensor:
        loss = model(*inputs).sum()
        loss.backward(dump_backward_graph_path=dump_dir)
        return loss

    return Case(model, run)


def lenet_and_input() -> tuple[nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return LeNet(), paddle.randn([1, 3, 32, 32])


def lenet() -> Case:
    return _sum_backward(*lenet_and_input())


def resnet18() -> Case:
    paddle.seed(0)
    return _sum_backward(paddle.vision.models.resnet18(), paddle.randn([1, 3, 32, 32]))


class TiedEmbedding(nn.Layer):
    """The embedding table is also the output projection (weight tying)."""

    def __init__(self, vocab: int = 11, dim: int = 8) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids: paddle.Tensor) -> paddle.Tensor:
        h = F.relu(self.proj(self.emb(ids)))
        return paddle.matmul(h, self.emb.weight, transpose_y=True)


def tied_and_input() -> tuple[nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return TiedEmbedding(), paddle.to_tensor([[1, 2, 3, 2]])


def tied() -> Case:
    return _sum_backward(*tied_and_input())


class TwoHeads(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(4, 6)
        self.a = nn.Linear(6, 3)
        self.b = nn.Linear(6, 2)

    def forward(self, x: paddle.Tensor) -> tuple[paddle.Tensor, paddle.Tensor]:
        h = F.tanh(self.body(x))
        return self.a(h), self.b(h)


def two_outputs_summed() -> Case:
    """``(a.sum() + b.mean()).backward()``: one root."""
    paddle.seed(0)
    model, x, kept = TwoHeads(), paddle.randn([2, 4]), {}

    def run(dump_dir: str) -> paddle.Tensor:
        a, b = model(x)
        kept.update(a=a, b=b)
        loss = a.sum() + b.mean()
        loss.backward(dump_backward_graph_path=dump_dir)
        return loss

    return Case(model, run, kept)


def two_outputs_listed() -> Case:
    """``paddle.autograd.backward([a.sum(), b.sum()])``: two roots, one dump."""
    paddle.seed(0)
    model, x = TwoHeads(), paddle.randn([2, 4])

    def run(dump_dir: str) -> list[paddle.Tensor]:
        a, b = model(x)
        roots = [a.sum(), b.sum()]
        paddle.autograd.backward(roots, dump_backward_graph_path=dump_dir)
        return roots

    return Case(model, run)


class BranchCut(nn.Layer):
    """Two branches that gradients never reach: one detached, one with stop_gradient=True;
    and a frozen parameter (stop_gradient=True) in the branch that is kept."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Linear(4, 4)
        self.detached = nn.Linear(4, 4)
        self.frozen = nn.Linear(4, 4)
        self.gain = self.create_parameter([4])
        self.gain.stop_gradient = True

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = self.trunk(x)
        cut = self.detached(h).detach()
        frozen = self.frozen(h)
        frozen.stop_gradient = True
        return h * self.gain + cut + frozen


def branch_cut() -> Case:
    paddle.seed(0)
    model = BranchCut()
    case = _sum_backward(model, paddle.randn([2, 4]))
    # The GradNodes the cut branches made (kept alive here so their addresses stay theirs).
    cut_nodes: list[Any] = []
    for layer in (model.detached, model.frozen):
        layer.register_forward_post_hook(
            lambda _layer, _args, out: cut_nodes.append(grad_node_of(out))
        )
    case.kept["cut_nodes"] = cut_nodes
    return case


class Cube(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx: Any, x: paddle.Tensor) -> paddle.Tensor:
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx: Any, dy: paddle.Tensor) -> paddle.Tensor:
        (x,) = ctx.saved_tensor()
        return dy * 3 * x * x


class WithPyLayer(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return Cube.apply(self.fc(x))


def pylayer() -> Case:
    paddle.seed(0)
    return _sum_backward(WithPyLayer(), paddle.randn([2, 4]))


def lstm() -> Case:
    paddle.seed(0)
    model, x = nn.LSTM(3, 4), paddle.randn([2, 3, 3])

    def run(dump_dir: str) -> paddle.Tensor:
        out, (_h, _c) = model(x)
        loss = out.sum()
        loss.backward(dump_backward_graph_path=dump_dir)
        return loss

    return Case(model, run)


def transformer_and_input() -> tuple[nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), paddle.randn([2, 3, 8])


def transformer_encoder() -> Case:
    return _sum_backward(*transformer_and_input())


class InPlace(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = self.fc(x)
        h.scale_(2.0)
        F.relu_(h)
        return h


def inplace() -> Case:
    paddle.seed(0)
    model, x, kept = InPlace(), paddle.randn([2, 4]), {}
    x.stop_gradient = False

    def run(dump_dir: str) -> paddle.Tensor:
        h = x * 1.0
        h.add_(model(x))
        h.tanh_()
        kept["h"] = h
        loss = h.sum()
        loss.backward(dump_backward_graph_path=dump_dir)
        return loss

    return Case(model, run, kept)


class TanhLinear(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.tanh(self.fc(x))


def double_backward() -> Case:
    """z = |dy/dx|^2 with create_graph=True; the oracle is the dump of z.backward()."""
    paddle.seed(0)
    model, x, kept = TanhLinear(), paddle.randn([2, 3]), {}
    x.stop_gradient = False

    def run(dump_dir: str) -> paddle.Tensor:
        y = model(x)
        (g,) = paddle.grad(y.sum(), x, create_graph=True)
        kept.update(x=x, y=y, g=g)
        z = (g * g).sum()
        z.backward(dump_backward_graph_path=dump_dir)
        return z

    return Case(model, run, kept)


class Block(nn.Layer):
    """Nested Sequentials, an own parameter and a residual add in the block's own forward."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.seq = nn.Sequential(
            nn.Linear(dim, dim), nn.ReLU(), nn.Sequential(nn.Linear(dim, dim), nn.Tanh())
        )
        self.scale = self.create_parameter([dim])

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.seq(x) * self.scale + x


class NestedNet(nn.Layer):
    def __init__(self, dim: int = 4) -> None:
        super().__init__()
        self.blocks = nn.LayerList([Block(dim), Block(dim)])
        self.head = nn.Sequential(nn.Linear(dim, 2))
        self.head_bias = self.create_parameter([2], is_bias=True)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x) + self.head_bias


def nested_and_input() -> tuple[nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return NestedNet(), paddle.randn([3, 4])


CASES: dict[str, Callable[[], Case]] = {
    "lenet": lenet,
    "resnet18": resnet18,
    "tied": tied,
    "two_outputs_summed": two_outputs_summed,
    "two_outputs_listed": two_outputs_listed,
    "branch_cut": branch_cut,
    "pylayer": pylayer,
    "lstm": lstm,
    "transformer_encoder": transformer_encoder,
    "inplace": inplace,
    "double_backward": double_backward,
}


# -- the oracle --------------------------------------------------------------------------------


def read_dump(directory: Path) -> BackwardDump:
    """The backward .dot Paddle wrote into ``directory`` (fails if there is none)."""
    return read_dump_dir(directory)


def ptr_of(tensor: paddle.Tensor) -> str:
    return hex(int(grad_node_of(tensor).node_ptr()))


def restrict_dump(dump: BackwardDump, root_ptrs: Iterable[str]) -> BackwardDump:
    """The part of the dump reachable from ``root_ptrs``."""
    out: dict[str, list[DumpEdge]] = collections.defaultdict(list)
    for edge in dump.edges:
        out[edge.source].append(edge)
    seen: set[str] = set()
    pending = list(root_ptrs)
    while pending:
        ptr = pending.pop()
        if ptr in seen:
            continue
        seen.add(ptr)
        pending.extend(e.target for e in out[ptr])
    return BackwardDump(
        nodes={p: n for p, n in dump.nodes.items() if p in seen},
        edges=tuple(e for e in dump.edges if e.source in seen),
    )


def _grad_text(dtype: Any, shape: Any, place: Any) -> str:
    return f"{dtype}{list(shape) if shape is not None else None}@{place}"


def edge_grads(graph: dict[str, Any]) -> dict[tuple[str, str], list[str]]:
    """(source ptr, target ptr) -> sorted gradient labels of its (parallel) edges."""
    ptr = {n["id"]: n["ptr"] for n in graph["nodes"]}
    table: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for e in graph["edges"]:
        g = e["grad"] or {"dtype": None, "shape": None, "place": None}
        table[(ptr[e["source"]], ptr[e["target"]])].append(
            _grad_text(g["dtype"], g["shape"], g["place"])
        )
    return {k: sorted(v) for k, v in table.items()}


def dump_edge_grads(dump: BackwardDump) -> dict[tuple[str, str], list[str]]:
    table: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for e in dump.edges:
        assert e.grad is not None, f"the dump has no gradient label on {e}"
        table[(e.source, e.target)].append(_grad_text(e.grad.dtype, e.grad.shape, e.grad.place))
    return {k: sorted(v) for k, v in table.items()}


def assert_matches_dump(graph: dict[str, Any], dump: BackwardDump) -> None:
    """Same nodes (ptr + name), same edge multiset, and every edge's dtype/shape/place equal
    to the dump's label for it (parallel edges compared as sorted multisets)."""
    nodes = {n["ptr"]: n["name"] for n in graph["nodes"]}
    assert len(nodes) == len(graph["nodes"]), "a GradNode appears twice"
    assert nodes == dump.nodes
    ptr = {n["id"]: n["ptr"] for n in graph["nodes"]}
    ours = collections.Counter((ptr[e["source"]], ptr[e["target"]]) for e in graph["edges"])
    assert ours == collections.Counter((e.source, e.target) for e in dump.edges)
    expected = dump_edge_grads(dump)
    for key, grads in edge_grads(graph).items():
        assert grads == expected[key], f"{nodes[key[0]]} -> {nodes[key[1]]} {key}"
