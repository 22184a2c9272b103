"""A walk kept as a few flat arrays, and from it the walk of any of its nodes again, with no
Paddle call. A GradNode's next_functions are fixed when Paddle makes the node, so the graph
below a node a trace()'s backward walked is still that walk's, for as long as the node lives
(the record that kept it proves that: capture/backward_record.py). At 100k GradNodes the
Paddle walk costs ~0.5 s of accessors (node_ptr, name, next_functions' fresh wrappers); this
one, ~0.1 s. The arrays hold no Python object per node or edge: nothing for the collector."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from functools import partial
from itertools import accumulate, chain, repeat
from operator import sub

from .walk import WalkedEdge, WalkedNode, WalkResult

# NamedTuples made from a row in C (their own __new__ is a Python function: ~2x the time).
_make_edge = partial(tuple.__new__, WalkedEdge)
_make_node = partial(tuple.__new__, WalkedNode)


class KeptWalk:
    """``walk_backward_graph``'s walk (its edges grouped by source, in node order, each node's
    in slot order: how that walk makes them), as flat columns."""

    __slots__ = ("names", "ptrs", "fanout", "ends", "targets", "slots", "roots")

    def __init__(self, walk: WalkResult) -> None:
        one: dict[str, str] = {}  # a few hundred distinct names: each kept once
        self.names = tuple([one.setdefault(n.name, n.name) for n in walk.nodes])
        self.ptrs = array("Q", walk.ptrs)
        self.fanout = array("I", [n.fanout for n in walk.nodes])
        sources, targets, slots = zip(*walk.edges) if walk.edges else ((), (), ())
        counts = Counter(sources)  # node i's edges: [ends[i - 1], ends[i])
        self.ends = array("I", accumulate(map(counts.get, range(len(walk.nodes)), repeat(0))))
        self.targets = array("I", targets)
        self.slots = array("I", slots)
        self.roots = len(set(walk.root_indices))  # the first ``roots`` nodes are its roots

    def walk_from(self, root_ptrs: Sequence[int]) -> WalkResult | None:
        """What ``walk_backward_graph`` gives from the nodes at ``root_ptrs`` (None if one is
        not in this walk): the same breadth-first order, ids and edges."""
        try:  # a few roots: each found by a scan of the array in C (no 100k-entry dict)
            roots = [self.ptrs.index(p) for p in root_ptrs]
        except ValueError:
            return None
        skip = self._dropped_prefix(roots)
        if skip is not None:
            return self._suffix(skip, len(roots))
        ends, targets = self.ends.tolist(), self.targets.tolist()
        starts = [0, *ends[:-1]]
        order = list(dict.fromkeys(roots))  # old indices in the new walk's order
        root_count = len(order)
        seen = bytearray(len(ends))
        for old in order:
            seen[old] = 1
        for old in order:  # grows as it goes: breadth first, each node's targets in slot order
            for target in targets[starts[old] : ends[old]]:
                if not seen[target]:
                    seen[target] = 1
                    order.append(target)
        new_of = dict(zip(order, range(len(order))))
        # Each node's edges, in the new order, taken whole (slices, in C).
        spans = list(map(slice, map(starts.__getitem__, order), map(ends.__getitem__, order)))
        counts = [s.stop - s.start for s in spans]
        edges = tuple(
            map(
                _make_edge,
                zip(
                    chain.from_iterable(map(repeat, range(len(order)), counts)),
                    map(new_of.__getitem__, chain.from_iterable(map(targets.__getitem__, spans))),
                    chain.from_iterable(map(self.slots.tolist().__getitem__, spans)),
                ),
            )
        )
        names, fanout = self.names, self.fanout
        ptrs = tuple(map(self.ptrs.__getitem__, order))
        nodes = tuple(
            map(
                _make_node,
                zip(
                    range(len(order)),
                    map(names.__getitem__, order),
                    ptrs,
                    chain(repeat(True, root_count), repeat(False, len(order) - root_count)),
                    map(fanout.__getitem__, order),
                ),
            )
        )
        result = WalkResult(nodes, edges, tuple(map(new_of.__getitem__, roots)))
        result.__dict__["ptrs"] = ptrs
        return result

    def _dropped_prefix(self, roots: list[int]) -> int | None:
        """0 if the walk from ``roots`` is this walk (its one root), 1 if it is this walk
        without its first node (y below ``y.sum().backward()``'s or a loss's node: its one
        root, all of whose edges go to node 1, which then reaches every other node first
        in the same breadth-first order); else None (the walk is made)."""
        if self.roots != 1 or not roots or any(r != roots[0] for r in roots) or roots[0] > 1:
            return None
        skip, first = roots[0], self.ends[0]
        if skip and (not first or any(t != 1 for t in self.targets[:first])):
            return None
        if skip and 0 in self.targets[first:]:  # an edge back to the root (no DAG): walked
            return None
        return skip

    def _suffix(self, skip: int, given: int) -> WalkResult:
        """This walk without its first ``skip`` nodes (``_dropped_prefix``), indices shifted;
        ``given``: how many root pointers were given (all the one root)."""
        n = len(self.names) - skip
        first = self.ends[skip - 1] if skip else 0  # the edges of the nodes kept
        ends = self.ends[skip:].tolist()
        counts = list(map(sub, ends, [first, *ends[:-1]]))
        shift = repeat(skip)
        edges = tuple(
            map(
                _make_edge,
                zip(
                    chain.from_iterable(map(repeat, range(n), counts)),
                    map(sub, self.targets[first:].tolist(), shift),
                    self.slots[first:].tolist(),
                ),
            )
        )
        ptrs = tuple(self.ptrs[skip:].tolist())
        nodes = tuple(
            map(
                _make_node,
                zip(
                    range(n),
                    self.names[skip:],
                    ptrs,
                    chain((True,), repeat(False, n - 1)),
                    self.fanout[skip:].tolist(),
                ),
            )
        )
        result = WalkResult(nodes, edges, (0,) * given)
        result.__dict__["ptrs"] = ptrs
        return result
