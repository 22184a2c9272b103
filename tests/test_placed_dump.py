"""Paddle's dump placed on the walked graph (merge/log_annotations.py placed_dump): the k-th dump
edge source -> target is the k-th next_functions entry of source equal to target. A dump with
each pair once takes a path that keeps no count per pair: both paths must agree with this
rule, on pairs at several slots (x * x), gradients None, unplaced edges, other graphs' nodes."""

from __future__ import annotations

import random

from paddleviz_widget.graph.model import GradInfo
from paddleviz_widget.tracer.merge.log_annotations import (
    _placed_counting,
    _placed_once,
    placed_dump,
)
from paddleviz_widget.tracer.parse.paddle_dump import BackwardDump, DumpEdge


def _rule(dump: BackwardDump, nexts: dict[int, list[int | None]]):
    """The rule, written plainly: the oracle."""
    edges, unplaced, every, placed = {}, 0, {}, {}
    for e in dump.edges:
        source, target = int(e.source, 16), int(e.target, 16)
        if source not in nexts:
            continue
        slots = [i for i, t in enumerate(nexts[source]) if t == target]
        k = every.get((source, target), 0)
        every[(source, target)] = k + 1
        unplaced += k >= len(slots)
        if e.grad is not None:
            j = placed.get((source, target), 0)
            placed[(source, target)] = j + 1
            if j < len(slots):
                edges[(source, slots[j])] = e.grad
    return edges, unplaced


def _graph(seed: int, repeats: bool):
    rng = random.Random(seed)
    ptrs = [0x7F00 + 16 * i for i in range(60)]
    nexts: dict[int, list[int | None]] = {}
    for i, p in enumerate(ptrs[:-1]):
        later = ptrs[i + 1 :]
        row: list[int | None] = list(rng.sample(later, min(len(later), rng.choice([1, 2, 3]))))
        if rng.random() < 0.2:
            row.insert(0, None)
        if repeats and rng.random() < 0.3:
            row.append(row[-1])  # the same input at two slots
        nexts[p] = row
    nexts[ptrs[-1]] = []
    grads = [GradInfo("float32", (2, k), "Place(cpu)") for k in range(4)] + [None]
    out = []
    for p, row in nexts.items():
        out += [DumpEdge(hex(p), hex(t), rng.choice(grads)) for t in row if t is not None]
    out.append(DumpEdge(hex(ptrs[3]), hex(0xBAD0), grads[0]))  # not its next_functions
    out.append(DumpEdge(hex(0xFFFF0), hex(ptrs[1]), grads[1]))  # another graph's node
    rng.shuffle(out)
    return nexts, BackwardDump({}, tuple(out))


def _grads(placed):
    return {key: note.grad for key, note in placed[0].items()}, placed[1]


def test_a_dump_with_each_pair_once_is_placed_without_counting() -> None:
    for seed in range(5):
        nexts, dump = _graph(seed, repeats=False)
        once = _placed_once(dump, nexts, "d")
        assert once is not None
        assert _grads(once) == _rule(dump, nexts)
        assert once == _placed_counting(dump, nexts, "d") == placed_dump(dump, nexts, "d")
        assert all(note.src == "d" for note in once[0].values())


def test_a_pair_at_several_slots_is_placed_by_counting() -> None:
    for seed in range(5):
        nexts, dump = _graph(seed, repeats=True)
        doubled = BackwardDump({}, dump.edges + dump.edges[:3])  # and pairs the dump repeats
        for d in (dump, doubled):
            placed = placed_dump(d, nexts, "d")
            assert _grads(placed) == _rule(d, nexts)
        assert _placed_once(doubled, nexts, "d") is None
