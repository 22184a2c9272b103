"""Which layer of graph b is which layer of graph a when a layer was inserted into (or taken
out of) a container, for graph/diff_match.py. Pure.

An nn.Sequential, a LayerList, a ResNet stage name their layers by position ("layers.3"): one
layer inserted shifts every later name by one, and matching by path alone shows each of those
layers removed and added again. Here the children of a container that are named by position
are aligned by structure instead (layer type, parameter shapes, the same of their sub-layers,
in order), as a text diff aligns lines; children named otherwise ("fc1", "self_attn") keep
their names. Where two alignments fit the structure equally (an inserted block just like its
neighbours) the one that pairs more equal names wins: the exact-name match first.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from .parts import GraphParts, Group

# Aligning n children of a against m of b costs n * m steps once the common ends are trimmed
# (an insertion leaves one): 200 x 200 ~50 ms of CPU, 1,000 x 1,000 ~1 s (every layer of a
# Sequential another width). Above this the middle is left to names, as without alignment.
_MAX_CELLS = 40_000


def group_paths(groups: Sequence[Group]) -> dict[str, str]:
    """Group id -> the layer path it is matched by. trace(model) names the model itself by
    its class (a top-level group named as its type): that is the path "" in any model, so two
    versions of a model whose classes are named differently still match."""
    return {g.id: "" if g.parent is None and g.name == g.type else g.name for g in groups}


class _Tree:
    """One graph's layer tree: children per group (None: the top level), paths, signatures."""

    def __init__(self, graph: GraphParts) -> None:
        self.groups = {g.id: g for g in graph.groups}
        self.path = group_paths(graph.groups)
        self.children: dict[str | None, list[str]] = {}
        for g in graph.groups:
            parent = g.parent if g.parent in self.groups else None
            self.children.setdefault(parent, []).append(g.id)
        shapes: dict[str, list[tuple[str, Hashable]]] = {}
        for n in graph.nodes:
            if n.kind == "param" and n.param is not None and n.group in self.groups:
                own = self.own(n.group, n.param.name)
                shapes.setdefault(n.group, []).append((own, n.param.shape))
        self.sig: dict[str, Hashable] = {}
        for gid in self._bottom_up():
            kids = tuple((self.step(k), self.sig[k]) for k in self.children.get(gid, ()))
            g = self.groups[gid]
            self.sig[gid] = hash((g.type, tuple(sorted(shapes.get(gid, []))), kids))

    def _bottom_up(self) -> list[str]:
        order: list[str] = []
        stack: list[str | None] = [None]
        while stack:
            gid = stack.pop()
            if gid is not None:
                order.append(gid)
            stack.extend(self.children.get(gid, ()))
        return order[::-1]

    def own(self, gid: str, name: str) -> str:
        """A name relative to group ``gid``'s path (a parameter's "weight" of "layers.3")."""
        path = self.path[gid]
        return name[len(path) + 1 :] if path and name.startswith(path + ".") else name

    def step(self, gid: str) -> str:
        """The group's own part of its path ("3" of "layers.3"), or its whole path."""
        g = self.groups[gid]
        parent = self.groups.get(g.parent or "")
        return self.own(parent.id, g.name) if parent is not None else self.path[gid]


def _positional(tree: _Tree, gid: str) -> bool:
    return tree.step(gid).isdigit()


def align_groups(a: GraphParts, b: GraphParts) -> dict[str, str | None]:
    """Per group id of b, the id of its counterpart in a (None: only in b). Top down: the
    children of two matched layers match by name, those named by position by alignment."""
    ta, tb = _Tree(a), _Tree(b)
    out: dict[str, str | None] = {g.id: None for g in b.groups}
    pairs: list[tuple[str | None, str | None]] = [(None, None)]
    while pairs:
        pa, pb = pairs.pop()
        kids_a, kids_b = ta.children.get(pa, []), tb.children.get(pb, [])
        key = ta.path if pa is None else {k: ta.step(k) for k in kids_a}
        by_name: dict[str, list[str]] = {}
        for k in kids_a:
            if pa is None or not _positional(ta, k):
                by_name.setdefault(key[k], []).append(k)
        for k in kids_b:
            if pb is None or not _positional(tb, k):
                name = tb.path[k] if pb is None else tb.step(k)
                pool = by_name.get(name)
                if pool:
                    out[k] = pool.pop(0)
        if pa is not None and pb is not None:
            seq_a = sorted((k for k in kids_a if _positional(ta, k)), key=lambda k: int(ta.step(k)))
            seq_b = sorted((k for k in kids_b if _positional(tb, k)), key=lambda k: int(tb.step(k)))
            for i, j in _align(ta, tb, seq_a, seq_b):
                out[seq_b[j]] = seq_a[i]
        pairs.extend((out[k], k) for k in kids_b if out[k] is not None)
    # What is left matches by its path, as without alignment, where a's is not taken: a layer
    # replaced by one of another type at its place ("1" a ReLU, then a Tanh) stays one layer.
    taken = set(out.values())
    by_path: dict[str, str] = {}
    for g in a.groups:
        by_path.setdefault(ta.path[g.id], g.id)
    for g in b.groups:
        there = by_path.get(tb.path[g.id]) if out[g.id] is None else None
        if there is not None and there not in taken:
            out[g.id] = there
            taken.add(there)
    return out


def _align(ta: _Tree, tb: _Tree, a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Pairs (i, j) of a[i] with b[j], in order: the common ends of equal structure first
    (the head by position, so equal names), then the middle by the most equal structures,
    then the most equal types, then the most equal names."""
    pairs: list[tuple[int, int]] = []
    lo = 0
    while lo < min(len(a), len(b)) and ta.sig[a[lo]] == tb.sig[b[lo]]:
        pairs.append((lo, lo))
        lo += 1
    hi_a, hi_b = len(a), len(b)
    while hi_a > lo and hi_b > lo and ta.sig[a[hi_a - 1]] == tb.sig[b[hi_b - 1]]:
        hi_a, hi_b = hi_a - 1, hi_b - 1
        pairs.append((hi_a, hi_b))
    n, m = hi_a - lo, hi_b - lo
    if n and m:
        if n * m <= _MAX_CELLS:
            pairs += _best(ta, tb, a[lo:hi_a], b[lo:hi_b], lo)
        else:  # too many to align: by name, as without alignment
            names = {ta.step(k): i for i, k in enumerate(a[lo:hi_a], lo)}
            for j, k in enumerate(b[lo:hi_b], lo):
                i = names.get(tb.step(k))
                if i is not None and ta.groups[a[i]].type == tb.groups[k].type:
                    pairs.append((i, j))
    return pairs


def _best(ta: _Tree, tb: _Tree, a: list[str], b: list[str], lo: int) -> list[tuple[int, int]]:
    """The order-keeping pairing of equal types with the most equal structures, then the most
    pairs, then the most equal names (dynamic programming, as a longest common subsequence)."""
    n, m = len(a), len(b)
    zero = (0, 0, 0)
    score = [[zero] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = score[i], score[i + 1]
        ga, sa, na = ta.groups[a[i]].type, ta.sig[a[i]], ta.step(a[i])
        for j in range(m - 1, -1, -1):
            best = max(below[j], row[j + 1])
            if ga == tb.groups[b[j]].type:
                s = below[j + 1]
                same = (sa == tb.sig[b[j]], 1, na == tb.step(b[j]))
                take = (s[0] + same[0], s[1] + 1, s[2] + same[2])
                best = max(best, take)
            row[j] = best
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        here = score[i][j]
        if ta.groups[a[i]].type == tb.groups[b[j]].type:
            s = score[i + 1][j + 1]
            full, named = ta.sig[a[i]] == tb.sig[b[j]], ta.step(a[i]) == tb.step(b[j])
            if (s[0] + full, s[1] + 1, s[2] + named) == here:
                pairs.append((lo + i, lo + j))
                i, j = i + 1, j + 1
                continue
        if score[i + 1][j] == here:
            i += 1
        else:
            j += 1
    return pairs


def b_paths(a: GraphParts, b: GraphParts) -> dict[str, Hashable]:
    """Per group id of b, the path its nodes are matched by: its counterpart's path in a, or,
    for a layer only b has, a key no layer of a has."""
    match = align_groups(a, b)
    pa, pb = group_paths(a.groups), group_paths(b.groups)
    return {gid: ("only b", pb[gid]) if j is None else pa[j] for gid, j in match.items()}


def renamed_paths(b: GraphParts, keys: dict[str, Hashable]) -> dict[str, Hashable]:
    """b's layer paths whose key (``b_paths``) is another: what a parameter under them is
    renamed by (``param_name``)."""
    paths = group_paths(b.groups)
    return {paths[gid]: key for gid, key in keys.items() if key != paths[gid] and paths[gid]}


def param_name(name: str, renamed: dict[str, Hashable]) -> Hashable:
    """A parameter of b named as a names it: the longest layer path it starts with that was
    renamed, translated ("layers.4.weight" -> "layers.3.weight")."""
    if not renamed:
        return name
    parts = name.split(".")
    for k in range(len(parts) - 1, 0, -1):
        there = renamed.get(".".join(parts[:k]))
        if there is not None:
            if not isinstance(there, str):
                return ("only b", name)
            rest = ".".join(parts[k:])
            return f"{there}.{rest}" if there else rest
    return name


def moved_layers(b: GraphParts, keys: dict[str, Hashable]) -> list[list[str]]:
    """[a's path, b's path] of each layer of b matched to a layer of a at another position in
    their container ("3" in a is "4" in b): what the diff says moved. Not their sub-layers,
    whose names moved with them."""
    paths = group_paths(b.groups)
    out = []
    for g in b.groups:
        key, path = keys.get(g.id), paths[g.id]
        if (
            isinstance(key, str)
            and key != path
            and key.rsplit(".", 1)[-1] != path.rsplit(".", 1)[-1]
        ):
            out.append([key, path])
    return out
