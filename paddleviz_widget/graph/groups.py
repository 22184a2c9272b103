"""Layer-group tree helpers (pure data)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def with_ancestors(group_ids: Iterable[str | None], parent: Mapping[str, str | None]) -> set[str]:
    """The given groups and every group above them in the tree (``parent``: id -> parent id)."""
    keep: set[str] = set()
    for gid in set(group_ids):  # one walk up per distinct group (100k nodes, 18k groups)
        cur = gid
        while cur is not None and cur not in keep:
            keep.add(cur)
            cur = parent.get(cur)
    return keep
