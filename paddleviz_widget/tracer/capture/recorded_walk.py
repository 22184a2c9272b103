"""build_graph's walk of a graph a trace()'s backward already walked: made from the walk its
record kept (read/kept_walk.py), with no Paddle accessor call per node and edge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..read.walk import WalkResult
from .session import RECENT_SESSIONS


def recorded_walk(grad_fns: Sequence[Any]) -> WalkResult | None:
    """The walk from ``grad_fns`` if a kept record vouches that they are nodes of the graph
    its backward walked (held, or reachable from a live tensor of it: then every node below
    them is alive and has the next_functions it had), else None."""
    ptrs = [int(g.node_ptr()) for g in grad_fns]
    for session in RECENT_SESSIONS.newest_first():
        for record in reversed(session.records):
            if record.kept is not None and not record.copies and record.vouches_for(ptrs):
                return record.kept.walk_from(ptrs)
    return None
