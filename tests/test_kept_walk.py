"""A graph a trace()'s backward walked is walked again from its record's kept arrays
(read/kept_walk.py, capture/recorded_walk.py), not through Paddle's accessors: that walk must
be exactly ``walk_backward_graph``'s (nodes, ids, edges, roots), and the document the same."""

from __future__ import annotations

import json
import random

import paddle
import pytest
from oracle_models import transformer_and_input

import paddleviz_widget.tracer.build as build
from paddleviz_widget import build_graph, trace
from paddleviz_widget.tracer.capture.recorded_walk import recorded_walk
from paddleviz_widget.tracer.read.kept_walk import KeptWalk
from paddleviz_widget.tracer.read.walk import walk_backward_graph


class _Node:
    """Shaped like a GradNode (walk.py walks anything with these three)."""

    def __init__(self, ptr: int, name: str) -> None:
        self.ptr, self._name = ptr, name
        self.next: list[_Node | None] = []

    def node_ptr(self) -> int:
        return self.ptr

    def name(self) -> str:
        return self._name

    @property
    def next_functions(self) -> list[_Node | None]:
        return self.next


def _dag(n: int, seed: int) -> list[_Node]:
    """Fan-out and fan-in, None entries, one target at several slots of a node."""
    rng = random.Random(seed)
    names = ["A", "B", "GradNodeAccumulation"]
    nodes = [_Node(0x1000 + 16 * i, rng.choice(names)) for i in range(n)]
    for i, node in enumerate(nodes[:-1]):
        for _ in range(rng.choice([1, 1, 2, 3])):
            node.next.append(nodes[min(n - 1, i + 1 + rng.randrange(6))])
        if rng.random() < 0.15:
            node.next.insert(rng.randrange(len(node.next) + 1), None)
        if rng.random() < 0.1:
            node.next.append(node.next[-1])  # x * x: the same input at two slots
    return nodes


def _same(a, b) -> bool:
    return (a.nodes, a.edges, a.root_indices, a.ptrs) == (b.nodes, b.edges, b.root_indices, b.ptrs)


@pytest.mark.parametrize("seed", range(4))
def test_a_kept_walk_walks_again_as_the_walk_does_from_any_of_its_nodes(seed: int) -> None:
    nodes = _dag(400, seed)
    walk = walk_backward_graph([nodes[0]])
    kept = KeptWalk(walk)
    by_ptr = {n.ptr: n for n in nodes}
    at = [by_ptr[n.ptr] for n in walk.nodes]  # the nodes in walk order
    picks = [[at[0]], [at[1]], [at[57]], [at[3], at[1]], [at[5], at[5]],
             [at[2], at[30], at[2]], [at[-1]], [at[40], at[0]]]  # fmt: skip
    for roots in picks:
        again = kept.walk_from([r.ptr for r in roots])
        assert again is not None and _same(again, walk_backward_graph(roots))
    unwalked = [n for n in nodes if n.ptr not in walk.names]
    if unwalked:  # above the root: not in this walk
        assert kept.walk_from([unwalked[0].ptr]) is None
    assert kept.walk_from([0xDEAD]) is None  # a node the kept walk never saw
    assert kept.walk_from([nodes[0].ptr, 0xDEAD]) is None


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("top", ["one input", "x * x", "a None slot", "two inputs", "two roots"])
def test_below_the_loss_node_the_kept_walk_is_shifted(seed: int, top: str, monkeypatch) -> None:
    """y.sum().backward(): the kept walk's root is the sum node, and y's node its only input;
    the walk from y (or from the root itself) is then taken from the arrays as they are."""
    nodes = _dag(300, seed)
    loss = _Node(0x10, "SumGradNode")
    loss.next = {"one input": [nodes[0]], "x * x": [nodes[0], nodes[0]],
                 "a None slot": [None, nodes[0]], "two inputs": [nodes[0], nodes[7]],
                 "two roots": [nodes[0]]}[top]  # fmt: skip
    kept_roots = [loss, nodes[3]] if top == "two roots" else [loss]
    kept = KeptWalk(walk_backward_graph(kept_roots))
    shifted: list[int] = []
    suffix = KeptWalk._suffix
    monkeypatch.setattr(KeptWalk, "_suffix", lambda k, *a: shifted.append(a[0]) or suffix(k, *a))
    for roots in ([nodes[0]], [nodes[0], nodes[0]], [loss], [loss, loss], [nodes[0], loss]):
        again = kept.walk_from([r.ptr for r in roots])
        assert again is not None and _same(again, walk_backward_graph(roots))
    if top == "two roots":
        assert shifted == []  # the walk is made: a node below the second root only
    elif top == "two inputs":
        assert shifted == [0, 0]  # only from the root itself
    else:
        assert shifted == [1, 1, 0, 0]


def _traced(make):
    paddle.seed(0)
    model, x = make()
    with trace(model):
        y = model(x)
        y.mean().backward()
    return model, y


def _lenet():
    return paddle.vision.models.LeNet(), paddle.randn([2, 1, 28, 28])


@pytest.mark.parametrize("make", [_lenet, transformer_and_input])
def test_a_traced_graph_is_walked_from_its_record_and_documented_alike(make, monkeypatch) -> None:
    model, y = _traced(make)
    walked = recorded_walk([y.grad_fn])
    assert walked is not None and _same(walked, walk_backward_graph([y.grad_fn]))
    used: list[object] = []
    monkeypatch.setattr(build, "recorded_walk", lambda fns: used.append(1) or recorded_walk(fns))
    from_record = json.dumps(build_graph(y), sort_keys=True)
    assert used  # the record's walk was the build's
    monkeypatch.setattr(build, "recorded_walk", lambda fns: None)  # Paddle's accessors
    assert json.dumps(build_graph(y), sort_keys=True) == from_record


def test_no_record_walk_for_a_graph_no_traced_backward_walked() -> None:
    _traced(_lenet)  # a record of another graph
    paddle.seed(1)
    model, x = _lenet()
    y = model(x)
    y.mean().backward()  # untraced
    assert recorded_walk([y.grad_fn]) is None
    z = model(x)  # a new graph, not yet run backward
    assert recorded_walk([z.grad_fn]) is None
