"""The layer groups of one graph document, by id and by layer path: what ``expand`` and
``collapse`` need to name groups and open the ones around them."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any


class LayerGroups:
    """Layer-group ids (payload order), names and parent links of one payload, read once in
    linear time."""

    def __init__(self, graph: Mapping[str, Any]) -> None:
        groups = [g for g in graph.get("groups") or [] if isinstance(g, Mapping)]
        self.names: dict[str, str] = {}
        for g in groups:
            self.names.setdefault(g["id"], g.get("name") or "")
        self.ids = list(self.names)
        self.by_name: dict[str, list[str]] = {}
        for gid, name in self.names.items():
            self.by_name.setdefault(name, []).append(gid)
        self.parent = {g["id"]: g.get("parent") for g in groups}

    def ancestors(self, gid: str) -> list[str]:
        """Groups enclosing group ``gid``, innermost first (a cycle in the links ends it)."""
        chain: list[str] = []
        cur = self.parent.get(gid)
        while cur in self.names and cur != gid and cur not in chain:
            chain.append(cur)
            cur = self.parent.get(cur)
        return chain

    def resolve(self, name: str) -> list[str]:
        """Group ids for a group id or a layer path such as "conv.0"; a ValueError listing
        close matches if there is none."""
        if name in self.names:
            return [name]
        if name in self.by_name:
            return self.by_name[name]
        if not self.ids:
            raise ValueError(f"no layer group {name!r}: this graph has no layer groups")
        candidates = sorted(set(self.by_name) | set(self.ids))
        close = difflib.get_close_matches(name, candidates, n=5, cutoff=0.4)
        hint = f"; close matches: {', '.join(map(repr, close))}" if close else ""
        shown = ", ".join(repr(self.names[g] or g) for g in self.ids[:8])
        raise ValueError(
            f"no layer group {name!r} in this graph{hint} (layer groups: {shown}"
            f"{', ...' if len(self.ids) > 8 else ''})"
        )


def has_id(graph: Mapping[str, Any], wanted: str) -> bool:
    """Whether a node, edge or group of ``graph`` has id ``wanted``."""
    return any(
        x.get("id") == wanted
        for key in ("nodes", "edges", "groups")
        for x in graph.get(key) or []
        if isinstance(x, Mapping)
    )
