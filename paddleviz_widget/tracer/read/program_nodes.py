"""Which GradNodes run a whole compiled program (``paddle.jit.to_static``, SOT subgraphs)."""

from __future__ import annotations

from collections.abc import Iterable

# Paddle 3.x names the backward of a to_static program "Dy2StGradNode"; older builds and the
# legacy (non-PIR) executor call it "RunProgramGradNode".
PROGRAM_NODE_NAMES = frozenset({"Dy2StGradNode", "RunProgramGradNode"})


def is_program_node(name: str) -> bool:
    return name in PROGRAM_NODE_NAMES


def program_node_ptrs(nodes: Iterable[tuple[str, int]]) -> frozenset[int]:
    """The pointers of the program nodes among (name, ptr) pairs."""
    return frozenset(ptr for name, ptr in nodes if is_program_node(name))
