"""hooked_nodes.hooks_cover / received_of against their rules written plainly, node by node
and edge by edge (they ask their per-name questions once per distinct name): random walks of
hooked ops, accumulation nodes, list-slot nodes (concat), PyLayers and program nodes."""

from __future__ import annotations

import random
from collections import Counter

from paddleviz_widget.tracer.capture.hooked_nodes import hooks_cover, received_of
from paddleviz_widget.tracer.read.walk import WalkedEdge, WalkedNode, WalkResult

OPS = ["MatmulGradNode", "TanhGradNode", "AddGradNode"]
ODD = ["ConcatGradNode", "GradNodePyLayer_Scale", "Dy2StGradNode", "StackGradNode"]
UNHOOKED = {"GradNodeAccumulation", "ConcatGradNode", "GradNodePyLayer_Scale",
            "Dy2StGradNode", "StackGradNode"}  # fmt: skip


def _sees(name: str) -> bool:
    return name not in UNHOOKED


def _cover_plainly(walk: WalkResult) -> bool:
    names = [n.name for n in walk.nodes]
    if "Dy2StGradNode" in names:
        return False
    for e in walk.edges:
        if not _sees(names[e.source]) and not _sees(names[e.target]):
            return False
    into = Counter(e.target for e in walk.edges)
    return all(
        into[e.target] == 1 for e in walk.edges if names[e.source].startswith("GradNodePyLayer")
    )


def _received_plainly(walk: WalkResult) -> frozenset[int]:
    names = [n.name for n in walk.nodes]
    return frozenset(
        walk.nodes[e.target].ptr
        for e in walk.edges
        if not _sees(names[e.source]) and _sees(names[e.target])
    )


def _walk(rng: random.Random, odd: list[str]) -> WalkResult:
    """A DAG: each node sends to 0-3 later nodes; leaves are accumulation nodes."""
    count = rng.randint(2, 40)
    names = [rng.choice(OPS + odd) if odd and rng.random() < 0.3 else rng.choice(OPS)
             for _ in range(count)]  # fmt: skip
    edges: list[WalkedEdge] = []
    fanout = [0] * count
    for k in range(count - 1):
        targets = rng.sample(range(k + 1, count), min(rng.randint(0, 3), count - k - 1))
        for slot, target in enumerate(targets):
            edges.append(WalkedEdge(k, target, slot))
        fanout[k] = len(targets)
    for k in range(count):
        if fanout[k] == 0 and k:
            names[k] = "GradNodeAccumulation"
    nodes = tuple(WalkedNode(k, names[k], 1000 + k, k == 0, fanout[k]) for k in range(count))
    return WalkResult(nodes, tuple(edges), (0,))


def test_random_walks_against_the_rules_written_plainly() -> None:
    rng = random.Random(20)
    outcomes = Counter()
    for case in range(3000):
        odd = [] if case % 4 == 0 else rng.sample(ODD, rng.randint(1, len(ODD)))
        walk = _walk(rng, odd)
        covered = hooks_cover(walk)
        assert covered == _cover_plainly(walk), walk
        assert received_of(walk) == _received_plainly(walk), walk
        outcomes[covered] += 1
    assert outcomes[True] > 100 and outcomes[False] > 100  # both answers were exercised


def test_pylayer_seen_through_its_target_only_when_alone_there() -> None:
    alone = WalkResult(
        nodes=(
            WalkedNode(0, "GradNodePyLayer_Scale", 10, True, 1),
            WalkedNode(1, "TanhGradNode", 11, False, 1),
            WalkedNode(2, "GradNodeAccumulation", 12, False, 0),
        ),
        edges=(WalkedEdge(0, 1, 0), WalkedEdge(1, 2, 0)),
        root_indices=(0,),
    )
    assert hooks_cover(alone) and received_of(alone) == frozenset({11})
    shared = WalkResult(
        nodes=(
            WalkedNode(0, "AddGradNode", 10, True, 2),
            WalkedNode(1, "GradNodePyLayer_Scale", 11, False, 1),
            WalkedNode(2, "TanhGradNode", 12, False, 1),
            WalkedNode(3, "GradNodeAccumulation", 13, False, 0),
        ),
        edges=(WalkedEdge(0, 1, 0), WalkedEdge(0, 2, 1), WalkedEdge(1, 2, 0), WalkedEdge(2, 3, 0)),
        root_indices=(0,),
    )
    assert not hooks_cover(shared) and received_of(shared) == frozenset({12})
