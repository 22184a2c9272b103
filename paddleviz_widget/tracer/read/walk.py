"""Iterative breadth-first walk of Paddle's backward graph.

Works on anything shaped like a GradNode (``name()``, ``node_ptr()``, ``next_functions``), so
it is testable without Paddle. Iterative on purpose: deep models would overflow Python's
recursion limit, which is what the seed paddleviz's recursive ``add_nodes`` did.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")

ACCUMULATION_NODE = "GradNodeAccumulation"


# NamedTuples, not dataclasses: a 10k-node graph makes ~20k of these per walk, and a tuple
# is several times cheaper to build (and to leave to the garbage collector).
class WalkedNode(NamedTuple):
    index: int  # type: ignore[assignment]  # shadows tuple.index(), which nothing here uses
    name: str
    ptr: int
    is_root: bool
    fanout: int = 0  # len(next_functions), None entries included

    @property
    def is_accumulation(self) -> bool:
        return self.name == ACCUMULATION_NODE


class WalkedEdge(NamedTuple):
    source: int  # WalkedNode.index of the GradNode that sends the gradient
    target: int  # WalkedNode.index of the GradNode in source.next_functions[slot]
    slot: int  # position in source.next_functions (None entries keep their place)


@dataclass(frozen=True)
class WalkResult:
    nodes: tuple[WalkedNode, ...]
    edges: tuple[WalkedEdge, ...]
    # ptr of each root grad_fn, in the order the roots were given (duplicates allowed).
    root_indices: tuple[int, ...]

    @cached_property
    def ptrs(self) -> tuple[int, ...]:
        """Each node's ptr, in node order (made once: the annotation steps each want it)."""
        return tuple([n.ptr for n in self.nodes])

    @cached_property
    def names(self) -> dict[int, str]:
        """ptr -> GradNode name, in node order."""
        return dict(zip(self.ptrs, [n.name for n in self.nodes]))

    @cached_property
    def edge_keys(self) -> list[tuple[int, int]]:
        """Each edge's (source ptr, slot), in edge order: what annotations key an edge by."""
        if not self.edges:
            return []
        sources, _, slots = zip(*self.edges)
        return list(zip(map(self.ptrs.__getitem__, sources), slots))

    def memo(self, key: str, make: Callable[[WalkResult], T]) -> T:
        """``make(self)``, made once per walk and kept with it under ``key`` (a column a later
        stage derives and asks for more than once: capture/hooked_nodes.py's)."""
        known = self.__dict__.get(key)
        if known is None:
            known = self.__dict__[key] = make(self)
        return known

    @cached_property
    def accumulation(self) -> frozenset[int]:
        """The ptrs of the GradNodeAccumulation nodes (parameters and leaf tensors)."""
        return frozenset([n.ptr for n in self.nodes if n.name == ACCUMULATION_NODE])


def walk_backward_graph(grad_fns: Sequence[Any], objects: list[Any] | None = None) -> WalkResult:
    """Visit every GradNode reachable from ``grad_fns`` once; record every edge.
    ``objects``: if given, each node's Python wrapper is appended to it, in node order (what
    the statistics hooks are registered on: one walk serves both).

    Nodes are keyed by ``node_ptr()`` because Paddle hands out a fresh Python wrapper on each
    ``next_functions`` access. Node order is BFS order from the roots, so ids derived from it
    are deterministic for a given graph.
    """
    index_of: dict[int, int] = {}
    found: list[tuple[str, int, bool]] = []  # (name, ptr, is_root) in BFS order
    fanout: list[int] = []
    edges: list[tuple[int, int, int]] = []  # WalkedEdge's fields, made WalkedEdges at the end
    pending: deque[tuple[int, Any]] = deque()

    def visit(grad_fn: Any, is_root: bool) -> int:
        ptr = int(grad_fn.node_ptr())
        known = index_of.get(ptr)
        if known is not None:
            return known
        idx = index_of[ptr] = len(found)
        found.append((str(grad_fn.name()), ptr, is_root))
        if objects is not None:
            objects.append(grad_fn)
        fanout.append(0)
        pending.append((idx, grad_fn))
        return idx

    root_indices = tuple(visit(g, True) for g in grad_fns)
    # The loop below is visit() written out: it runs once per edge (100k+ on big graphs).
    append_edge, get_index = edges.append, index_of.get
    while pending:
        idx, grad_fn = pending.popleft()
        next_functions = grad_fn.next_functions
        fanout[idx] = len(next_functions)
        for slot, nxt in enumerate(next_functions):
            if nxt is None:  # input with stop_gradient=True: no gradient flows there
                continue
            ptr = int(nxt.node_ptr())
            target = get_index(ptr)
            if target is None:
                target = index_of[ptr] = len(found)
                found.append((str(nxt.name()), ptr, False))
                if objects is not None:
                    objects.append(nxt)
                fanout.append(0)
                pending.append((target, nxt))
            append_edge((idx, target, slot))
    names, ptrs, roots = zip(*found) if found else ((), (), ())
    # The named tuples made in C (tuple.__new__ of the class: what their __new__ does, without
    # its Python call per item: ~5 ms of a 10k-node walk)
    rows = zip(range(len(found)), names, ptrs, roots, fanout)
    nodes = tuple(map(tuple.__new__, repeat(WalkedNode), rows))
    walked_edges = tuple(map(tuple.__new__, repeat(WalkedEdge), edges))
    result = WalkResult(nodes, walked_edges, root_indices)
    result.__dict__["ptrs"] = ptrs  # its cached column, known already
    return result


def next_ptrs(walk: WalkResult) -> dict[int, list[int | None]]:
    """Each node's next_functions as pointers (None where Paddle has None), keyed by ptr."""
    ptrs = walk.ptrs
    rows: list[list[int | None]] = [[None] * n.fanout for n in walk.nodes]
    for source, target, slot in walk.edges:
        rows[source][slot] = ptrs[target]
    return dict(zip(ptrs, rows))
