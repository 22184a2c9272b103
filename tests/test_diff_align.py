"""graph/diff_align.py on layer trees too big to align: a Sequential of 300 layers, every
one another width in b (no common ends to trim), is matched by name, as before alignment
existed, and fast; one of 300 with a layer inserted still aligns (its ends trim away)."""

from __future__ import annotations

import time

from paddleviz_widget.graph.diff_align import align_groups
from paddleviz_widget.graph.parts import GraphParts, Group, Node, ParamInfo


def stack(widths: list[int]) -> GraphParts:
    """A Sequential of Linear layers of these widths: one weight node per layer."""
    groups = [Group("root", "Seq", "Seq")]
    nodes = []
    for k, (i, o) in enumerate(zip(widths, widths[1:])):
        groups.append(Group(f"g{k}", str(k), "Linear", "root"))
        param = ParamInfo(f"{k}.weight", (i, o), "float32")
        nodes.append(Node(f"p{k}", "GradNodeAccumulation", "0", "param", f"g{k}", param))
    return GraphParts(tuple(nodes), (), tuple(groups), {})


def test_every_layer_of_a_long_stack_changed_matches_by_name_quickly() -> None:
    a = stack([4] * 301)
    b = stack([4 if k % 2 == 0 else 5 for k in range(301)])
    start = time.process_time()
    match = align_groups(a, b)
    assert time.process_time() - start < 0.5
    assert match == {"root": "root", **{f"g{k}": f"g{k}" for k in range(300)}}


def test_one_inserted_into_a_long_stack_still_aligns() -> None:
    widths = [4 + k % 7 for k in range(301)]
    a = stack(widths)
    b = stack(widths[:150] + [widths[150]] + widths[150:])  # a square layer at 150
    match = align_groups(a, b)
    assert match["g150"] is None
    assert all(match[f"g{k}"] == f"g{k - (k > 150)}" for k in range(301) if k != 150)
