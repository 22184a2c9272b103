"""The layer groups of nested trace() sessions as one tree.

``with trace(G): ... with trace(D): ...`` records G's layers in one session and D's in the
other; a graph through both (a GAN's discriminator on the generator's output) holds the nodes
of both. Their union is what one ``trace()`` without a model would give: each model a root
(a second root of the same class named ``Sequential_1``), children named by their path under
their root. A layer both sessions recorded (a submodel traced again inside its model's trace)
is one group, the first session's: recognised by ``LayerScopes.layer_keys``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...graph.model import Group
from .layer_scopes import LayerScopes


def union_scopes(parts: Sequence[LayerScopes]) -> LayerScopes:
    """One LayerScopes from several, in precedence order (the outermost session first): a
    node claimed by more than one keeps the first claim."""
    if len(parts) == 1:
        return parts[0]
    base = parts[0]
    groups = list(base.groups)
    group_of_ptr = dict(base.group_of_ptr)
    call_sites = dict(base.call_sites)
    node_sites = dict(base.node_sites)
    node_names = dict(base.node_names)
    keys = dict(base.layer_keys)
    gid_of_key = {key: gid for gid, key in keys.items()}
    next_k = 1 + max((int(g.id[1:]) for g in groups), default=-1)
    root_names = {g.name for g in groups if g.parent is None}
    for part in parts[1:]:
        rename: dict[str, str] = {}
        for g in part.groups:  # parents before children
            key = part.layer_keys.get(g.id)
            if key is not None and key in gid_of_key:
                rename[g.id] = gid_of_key[key]
                continue
            gid, next_k = f"g{next_k}", next_k + 1
            name, parent = g.name, rename.get(g.parent) if g.parent is not None else None
            if parent is None:
                k = 1
                while name in root_names:
                    name, k = f"{g.name}_{k}", k + 1
                root_names.add(name)
            groups.append(Group(gid, name, g.type, parent))
            rename[g.id] = gid
            if key is not None:
                gid_of_key[key], keys[gid] = gid, key
        for ptr, gid in part.group_of_ptr.items():
            group_of_ptr.setdefault(ptr, rename[gid])
        for gid, site in part.call_sites.items():
            call_sites.setdefault(rename[gid], site)
        for ptr, site in part.node_sites.items():
            node_sites.setdefault(ptr, site)
        for ptr, name in part.node_names.items():
            node_names.setdefault(ptr, name)
    return LayerScopes(tuple(groups), group_of_ptr, call_sites, node_sites, node_names, keys)
