"""Which node, edge and layer group of graph a is which of graph b, for graph/diff.py. Pure.

Nothing is matched by pointer or id (two runs share neither): a parameter by its name, any
other node by its layer path and op name and which one it is of those (the k-th in backward
topological order from the outputs), a layer group by its path, an edge by its matched ends
and sending slot. Layer paths and parameter names of b are first translated to a's where a
layer inserted into a container shifted them (graph/diff_align.py). Every step here is a pass
over dicts: linear in the size of the graphs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from typing import Optional

from .diff_align import b_paths, group_paths, param_name, renamed_paths
from .parts import Edge, GraphParts, Node

Match = list[
    Optional[int]
]  # runs on 3.9; per item of b, the position of its match in a (None: added)


def backward_order(graph: GraphParts) -> list[int]:
    """Node positions in backward topological order (Kahn, first in first out) from the
    outputs: roots as meta.outputs lists them, then in document order; each node's targets
    in next_functions order. Nodes on a cycle (none in a real backward graph) come last."""
    nodes = graph.nodes
    pos = {n.id: i for i, n in enumerate(nodes)}
    targets: list[list[tuple[int, int]]] = [[] for _ in nodes]
    indegree = [0] * len(nodes)
    for e in graph.edges:
        s, t = pos.get(e.source), pos.get(e.target)
        if s is not None and t is not None:
            targets[s].append((e.index, t))
            indegree[t] += 1
    named = [o.get("node") for o in graph.meta.get("outputs") or [] if isinstance(o, dict)]
    roots = [pos[n] for n in named if n in pos and indegree[pos[n]] == 0]
    roots += [i for i in range(len(nodes)) if indegree[i] == 0]
    order: list[int] = []
    seen = [False] * len(nodes)
    queue = deque(roots)
    while queue:
        i = queue.popleft()
        if seen[i]:
            continue
        seen[i] = True
        order.append(i)
        out = targets[i]
        for _, t in sorted(out) if len(out) > 1 else out:
            indegree[t] -= 1
            if indegree[t] == 0:
                queue.append(t)
    order += [i for i in range(len(nodes)) if not seen[i]]
    return order


def _node_key(
    node: Node, groups: Mapping[str, Hashable], renamed: dict[str, Hashable] | None = None
) -> Hashable:
    if node.kind == "param" and node.param is not None:
        return ("param", param_name(node.param.name, renamed or {}))
    return ("op", groups.get(node.group or ""), node.name)


def match_in_order(keys_a: Sequence[Hashable], keys_b: Sequence[Hashable]) -> Match:
    """The k-th item of b with a key matches the k-th item of a with that key."""
    pools: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys_a):
        pool = pools.get(key)
        if pool is None:
            pools[key] = [i]
        else:
            pool.append(i)
    taken: dict[Hashable, int] = {}  # per key, how many of its pool are matched
    out: Match = []
    for key in keys_b:
        pool = pools.get(key)
        k = taken.get(key, 0)
        if pool is not None and k < len(pool):
            out.append(pool[k])
            taken[key] = k + 1
        else:
            out.append(None)
    return out


# meta.sources.nodes.group code of a group inferred from which layer owns the parameters
# (no trace() saw the forward): an op without parameters is put in an enclosing layer.
INFERRED_GROUP = "o"


def _inferred(graph: GraphParts) -> list[bool]:
    codes = ((graph.meta.get("sources") or {}).get("nodes") or {}).get("group") or ""
    return [c == INFERRED_GROUP for c in codes] + [False] * (len(graph.nodes) - len(codes))


def _within(path: str | None, other: str | None) -> bool:
    """Whether one layer path is the other or encloses it ("" is the model itself)."""
    if path is None or other is None:
        return False
    inner, outer = (path, other) if len(path) >= len(other) else (other, path)
    return outer == "" or inner == outer or inner.startswith(outer + ".")


def match_nodes(a: GraphParts, b: GraphParts, keys: dict[str, Hashable] | None = None) -> Match:
    """Per node of b (document order), the position of its match in a. Then, of the nodes
    left, an op whose layer one graph only inferred (a traced graph against one built without
    trace()) matches the same op, in the same order, in a layer that encloses it or that it
    encloses: the two placements differ by how they were found, not by the model. ``keys``:
    b_paths(a, b), when the caller has it."""
    ga, gb = group_paths(a.groups), b_paths(a, b) if keys is None else keys
    renamed = renamed_paths(b, gb)
    order_a, order_b = backward_order(a), backward_order(b)
    found = match_in_order(
        [_node_key(a.nodes[i], ga) for i in order_a],
        [_node_key(b.nodes[i], gb, renamed) for i in order_b],
    )
    out: Match = [None] * len(b.nodes)
    for k, i in enumerate(order_b):
        j = found[k]
        out[i] = None if j is None else order_a[j]
    inferred_a, inferred_b = _inferred(a), _inferred(b)
    if any(inferred_a) or any(inferred_b):
        taken = set(out)
        left: dict[str, list[int]] = {}  # op name -> a's unmatched ops, backward order
        for j in order_a:
            if j not in taken and a.nodes[j].kind != "param":
                left.setdefault(a.nodes[j].name, []).append(j)
        for i in order_b:
            node = b.nodes[i]
            pool = left.get(node.name) if out[i] is None and node.kind != "param" else None
            key = gb.get(node.group or "")  # a layer only b has: its own path, to be within
            path = key[1] if isinstance(key, tuple) else key if isinstance(key, str) else None
            for k, j in enumerate(pool or ()):
                if (inferred_a[j] or inferred_b[i]) and _within(
                    path, ga.get(a.nodes[j].group or "")
                ):
                    out[i] = j
                    del pool[k]  # type: ignore[union-attr]
                    break
    return out


def match_groups(a: GraphParts, b: GraphParts, keys: dict[str, Hashable] | None = None) -> Match:
    """Per group of b, the position of its counterpart in a (graph/diff_align.py: the same
    layer path, or the same place in a container whose names shifted)."""
    ga, gb = group_paths(a.groups), b_paths(a, b) if keys is None else keys
    return match_in_order([ga[g.id] for g in a.groups], [gb[g.id] for g in b.groups])


def match_edges(
    a: Sequence[Edge], b: Sequence[Edge], ends_a: dict[str, str], ends_b: dict[str, str]
) -> Match:
    """Per edge of b, its match in a: the same (matched) source and target and the same
    sending slot, the k-th of those in next_functions order; then, among the edges left, the
    same ends alone (a slot that changed, or one graph without slot names)."""

    def ordered(edges: Sequence[Edge]) -> list[int]:
        return sorted(range(len(edges)), key=lambda i: edges[i].index)

    order_a, order_b = ordered(a), ordered(b)
    out: Match = [None] * len(b)
    left_a = list(order_a)
    left_b = list(order_b)
    for with_slot in (True, False):

        def key(e: Edge, ends: dict[str, str], slot: bool = with_slot) -> Hashable:
            return (ends[e.source], ends[e.target], e.slot if slot else None)

        found = match_in_order(
            [key(a[i], ends_a) for i in left_a], [key(b[i], ends_b) for i in left_b]
        )
        taken = set()
        for k, i in enumerate(left_b):
            j = found[k]
            if j is not None:
                out[i] = left_a[j]
                taken.add(left_a[j])
        left_b = [i for i in left_b if out[i] is None]
        left_a = [i for i in left_a if i not in taken]
    return out
