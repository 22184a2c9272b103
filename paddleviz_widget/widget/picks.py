"""``w.selected``, ``w.expanded`` and ``w.depth`` set in Python, checked against the graph: a
layer path where a group id goes (``w.expanded = ["conv"]``) opened nothing and stayed in the
trait, a ``selected`` the graph has not selected nothing, and ``depth = -7`` meant -1, all
silently."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .layer_groups import LayerGroups, has_id


def picked(graph: Mapping[str, Any], groups: LayerGroups, name: str, value: Any) -> Any:
    """``value`` for trait ``name`` ("selected", "expanded" or "depth"), or a ValueError
    saying what the graph holds and the call that takes a layer path."""
    if name == "depth":  # -7 was read as -1, the automatic depth, without a word
        if value < -1:
            raise ValueError(f"depth: {value} is no level: 0 or more, or -1 for the automatic one")
        return value
    if name == "expanded":
        wanted = [value] if isinstance(value, str) else list(value)
        ids: list[str] = []
        for item in wanted:  # an id, or a layer path as expand() takes (its groups' ids)
            try:
                found = groups.resolve(item)
            except ValueError as error:
                raise ValueError(f"expanded: {error}; w.expand(path) opens one") from None
            ids.extend(g for g in found if g not in ids)
        return ids
    # the page's own ids are not in the document: a merged edge's "n3-n7" (js/view/visible.ts)
    # and a folded run's "g3..g7" (js/view/repeats.ts RUN_ID_SEPARATOR), whose ends it has
    if ".." in value:
        picked(graph, groups, name, value.split("..")[0] or value)
        return value
    if value and "-" not in value and not has_id(graph, value):
        raise ValueError(
            f"selected: no node, edge or layer group {value!r} in this graph (ids such as "
            f"'n3', 'e5', 'g2'; \"\" for none)"
        )
    return value
