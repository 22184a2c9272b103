"""graph.parts.built: a Node or Edge made without the frozen __init__ is the same value."""

from __future__ import annotations

import dataclasses

import pytest

from paddleviz_widget.graph.parts import CallSite, Edge, GradInfo, Node, Slot, built


def test_built_node_and_edge_equal_the_constructed_ones() -> None:
    site = CallSite("model.py", 3, "forward")
    slot = (Slot("x", "t0", GradInfo("float32", (2, 3))),)
    node = Node("n0", "matmul_grad", "0x1", "op", "g1", None, site, slot, (), None, None)
    fast = built(
        Node, "n0", "matmul_grad", "0x1", "op", "g1", None, site, slot, (), None, None, None
    )
    assert fast == node and hash(fast) == hash(node) and repr(fast) == repr(node)
    assert dataclasses.asdict(fast) == dataclasses.asdict(node)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.name = "other"  # type: ignore[misc]
    edge = Edge("e0", "n0", "n1", 1, GradInfo("float32", (2,)), "grad_x")
    assert (
        built(Edge, "e0", "n0", "n1", 1, GradInfo("float32", (2,)), "grad_x", None, None, None)
        == edge
    )


def test_built_refuses_a_wrong_number_of_values() -> None:
    with pytest.raises(TypeError, match="Edge has 9 fields, got 3"):
        built(Edge, "e0", "n0", "n1")
