"""Layer groups for a graph built without ``trace()``, from parameter ownership alone.

After a plain ``loss.backward()`` nothing recorded which layer ran which op; what survives is
which parameters each GradNode consumed. Pure: plain data keyed by GradNode ptr (like
annotate.py), never Paddle objects; ``layer_tree`` is the one helper that reads a model.

The rule ("right or absent": a node gets a group only where the evidence places it at or above
the layer that really made it):

1. A parameter's accumulation node belongs to the layer owning the parameter: the prefix of its
   name ("fc.0.weight" -> "fc.0"), as ``trace()`` places it (first owner of a tied parameter).
2. An op node that consumes parameters directly (an accumulation node among its
   next_functions) is an *anchor*: it belongs to the lowest common ancestor (LCA) of those
   parameters' owners. A parameter consumed by more than one op node is *shared* (tied
   weights, or a layer called twice) and anchors nothing: its consumers may run in another
   layer (the tied output projection runs in the model's forward), or in another call of the
   layer, between which any op could sit.
3. Any other op node gets the LCA of the first anchors met on every path upstream (what it
   consumed) and downstream (what consumed it), and only if both sides have one: anchors A
   before it and B after it run inside the call of LCA(A, B), so it does too, at that layer
   or below it. One-sided nodes (a loss computed after the model, input preprocessing) stay
   ungrouped: they may lie outside the model.

Layer paths are compared by dotted components ("layers.1" is no ancestor of "layers.10").
With a model, groups follow trace()'s scheme (tracer/layer_scopes.py): id "g<k>" with k the
layer's position in ``named_sublayers(include_self=True)``, the root a group named by its class.
With torchviz-style ``params`` only, layer paths come from the dotted names, type "Layer", and
there is no root group: what would belong to the root stays ungrouped.

Assumes the model ran as one call (``model(x)``). Known wrong cases: a parameter used once,
by an op outside its owner (``F.linear(h, self.embed.weight)`` where the embedding is never
called) claims the owner; user code that calls sublayers one by one (``model.enc(x)`` then
``model.dec(h)``) gets its ops in between placed in the never-called root.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...digits import is_int_text
from ...graph.groups import with_ancestors
from ...graph.model import Group, ParamInfo
from ..read.walk import WalkResult
from .annotate import Annotations

Path = tuple[str, ...]  # a layer path by components; () is the model itself
PARAMS_ONLY_TYPE = "Layer"  # the type of a group derived from parameter names alone


@dataclass(frozen=True)
class InferredGroups:
    groups: tuple[Group, ...] = ()
    group_of_ptr: dict[int, str] = field(default_factory=dict)


def layer_tree(model: Any) -> dict[str, str]:
    """Layer path -> type name, in the order trace() numbers groups ("" is the model)."""
    from ..capture.layer_scopes import _tree  # same traversal, so the ids match trace()'s

    return {path: type(layer).__name__ for layer, path, _ in _tree(model)}


def _split(path: str) -> Path:
    return tuple(path.split(".")) if path else ()


def _lca(a: Path | None, b: Path | None) -> Path | None:
    """Lowest common ancestor; None means "no evidence" and gives way to the other side."""
    if a is None or b is None:
        return b if a is None else a
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


def _owners(params: Mapping[int, ParamInfo], layers: Mapping[str, str] | None) -> dict[int, Path]:
    """Accumulation ptr -> owner layer path; names whose layer the model lacks are skipped."""
    owners = {}
    for ptr, info in params.items():
        owner = info.name.rpartition(".")[0]
        if layers is None or owner in layers:
            owners[ptr] = _split(owner)
    return owners


def _topological(n: int, succ: list[list[int]]) -> list[int]:
    """Node indices, every source before its targets (the walk is a DAG)."""
    indegree = [0] * n
    for targets in succ:
        for t in targets:
            indegree[t] += 1
    order = [i for i in range(n) if indegree[i] == 0]
    for i in order:  # grows while iterated: Kahn's algorithm
        for t in succ[i]:
            indegree[t] -= 1
            if indegree[t] == 0:
                order.append(t)
    return order


def _place(walk: WalkResult, owners: Mapping[int, Path]) -> dict[int, Path]:
    """Walk index -> layer path, by rules 1-3 of the module docstring."""
    nodes = walk.nodes
    n = len(nodes)
    succ: list[list[int]] = [[] for _ in range(n)]  # targets: what the node's op consumed
    pred: list[list[int]] = [[] for _ in range(n)]  # sources: the ops that consumed it
    for e in walk.edges:
        succ[e.source].append(e.target)
        pred[e.target].append(e.source)
    owner_at = {i: owners[w.ptr] for i, w in enumerate(nodes) if w.ptr in owners}
    placed: dict[int, Path] = dict(owner_at)
    anchor: dict[int, Path] = {}
    for i, w in enumerate(nodes):
        if w.is_accumulation:
            continue
        found: Path | None = None
        for t in set(succ[i]):
            if t in owner_at and len(set(pred[t])) == 1:  # shared parameters anchor nothing
                found = _lca(found, owner_at[t])
        if found is not None:
            anchor[i] = found
    order = _topological(n, succ)
    # First anchors downstream (sources come first in `order`), then upstream (reversed).
    down: list[Path | None] = [None] * n
    for i in order:
        for s in pred[i]:
            down[i] = _lca(down[i], anchor[s] if s in anchor else down[s])
    up: list[Path | None] = [None] * n
    for i in reversed(order):
        for t in succ[i]:
            if not nodes[t].is_accumulation:
                up[i] = _lca(up[i], anchor[t] if t in anchor else up[t])
    for i, w in enumerate(nodes):
        if i in anchor:
            placed[i] = anchor[i]
        elif not w.is_accumulation and (before := up[i]) is not None and down[i] is not None:
            placed[i] = _lca(before, down[i]) or ()
    return placed


def _tree_of_names(paths: Iterable[Path]) -> dict[str, str]:
    """Params-only: every prefix of the owners' paths, parents first, in first-seen order."""
    tree: dict[str, str] = {}
    for path in paths:
        for k in range(1, len(path) + 1):
            tree.setdefault(".".join(path[:k]), PARAMS_ONLY_TYPE)
    return tree


def infer_param_groups(
    walk: WalkResult, params: Mapping[int, ParamInfo], layers: Mapping[str, str] | None = None
) -> InferredGroups:
    """Groups and GradNode ptr -> group id for a walked graph, from parameter ownership.

    ``params``: accumulation-node ptr -> ParamInfo named by its dotted path ("fc.0.weight").
    ``layers``: the model's ``layer_tree`` (path -> type name, "" the model); None when only
    named parameters are known: layer paths then come from the names, without a root group.
    """
    owners = _owners(params, layers)
    if not owners:
        return InferredGroups()
    placed = _place(walk, owners)
    model_mode = layers is not None
    tree = dict(layers) if layers is not None else _tree_of_names(owners.values())
    gid = {path: f"g{k}" for k, path in enumerate(tree)}
    group_of_ptr = {}
    for i, path in placed.items():
        name = ".".join(path)
        if name in gid and (model_mode or path):  # params-only: the root is no group
            group_of_ptr[walk.nodes[i].ptr] = gid[name]
    # A layer's parent is its path prefix; params-only, top-level paths have none.
    parent_of = {gid[p]: gid[p.rpartition(".")[0]] for p in tree if "." in p or (p and model_mode)}
    used = with_ancestors(group_of_ptr.values(), parent_of)
    root_name = tree.get("", "")
    groups = tuple(
        Group(gid[p], p or root_name, tree[p], parent_of.get(gid[p]))
        for p in tree
        if gid[p] in used
    )
    return InferredGroups(groups, group_of_ptr)


def param_groups_layer(
    walk: WalkResult, params: Mapping[int, ParamInfo], model: Any = None
) -> Annotations:
    """Groups from the named ``params`` (and ``model``'s layer tree, if known), as a layer."""
    layer = Annotations(src={"group": "o"})
    layers = layer_tree(model) if model is not None else None
    inferred = infer_param_groups(walk, params, layers)
    if inferred.group_of_ptr:
        layer.groups = inferred.groups
        layer.group_of_ptr = dict(inferred.group_of_ptr)
        layer.sources.append("layers-inferred")
    return layer


def ensure_layer_group(ann: Annotations, model: Any, path: str) -> str | None:
    """The id of the group for layer ``path``, added (with its ancestors) when no node put it
    in the graph yet, numbered as trace() numbers layers; None if that cannot be done safely."""
    by_name = {g.name: g.id for g in ann.groups}
    if path in by_name:
        return by_name[path]
    if model is None:
        return None
    tree = layer_tree(model)
    if path not in tree:
        return None
    order = {p: k for k, p in enumerate(tree)}
    names = {g.id: g.name for g in ann.groups}
    added: list[Group] = []
    current: str | None = path
    while current is not None:
        name = current or tree[""]  # trace() names the model's own group by its class
        gid = by_name.get(name, f"g{order[current]}")
        if names.get(gid, name) != name:
            return None  # that id means another layer here
        if added:  # the group made last hangs below this one
            added[-1] = Group(added[-1].id, added[-1].name, added[-1].type, gid)
        if gid in names:
            break
        added.append(Group(gid, name, tree[current]))
        current = current.rpartition(".")[0] if current else None
    ann.groups = tuple(sorted((*ann.groups, *added), key=lambda g: _number(g.id)))
    return added[0].id if added else by_name.get(path)


def _number(gid: str) -> int:
    return int(gid[1:]) if is_int_text(gid[1:]) else -1
