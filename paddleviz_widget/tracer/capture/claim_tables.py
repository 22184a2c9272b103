"""A recording's claims as a snapshot's three node tables (layer_scopes._scopes).

Each forward keeps its claims as columns (scope_recording._Forward: ptrs, names, claiming
calls), so the tables are made by zips in C: a llama-10k step's ~10k claims, instead of four
passes of one Python step per claim over a ptr -> call table.
"""

from __future__ import annotations

from collections.abc import Collection
from itertools import compress
from operator import attrgetter
from typing import Any

from ...graph.model import CallSite
from .scope_recording import Recording

_SITE = attrgetter("site")


def claim_tables(
    rec: Recording, gid: dict[int, str], only: Collection[int] | None
) -> tuple[dict[int, str], dict[int, CallSite], dict[int, str]]:
    """(ptr -> group id, ptr -> call site, ptr -> GradNode name) of every kept claim, in claim
    order; ``only``: just the claims of these ptrs. ``gid``: id(layer) -> its group id."""
    keep = only if only is None or isinstance(only, (set, frozenset)) else set(only)
    group_of_ptr: dict[int, str] = {}
    node_sites: dict[int, CallSite] = {}
    names: dict[int, str] = {}
    for forward in rec.forwards:
        ptrs: list[int] = forward.claimed
        named: list[str] = forward.names
        by: list[Any] = forward.by
        if keep is not None and keep.isdisjoint(ptrs):  # an older step's forward (in C)
            continue
        if keep is not None and not keep.issuperset(ptrs):  # (usually all are: one check in C)
            kept = list(map(keep.__contains__, ptrs))
            ptrs, named, by = [list(compress(c, kept)) for c in (ptrs, named, by)]
        # The group and site of each claiming call, once per call (a call claims ~6 nodes)
        group = {call: gid[id(call.layer)] for call in dict.fromkeys(by)}
        group_of_ptr.update(zip(ptrs, map(group.__getitem__, by)))
        sites = [call.site for call in group]
        if None in sites:
            node_sites.update((p, c.site) for p, c in zip(ptrs, by) if c.site is not None)
        else:
            node_sites.update(zip(ptrs, map(_SITE, by)))
        names.update(zip(ptrs, named))
    return group_of_ptr, node_sites, names
