"""Which finished trace() sessions build_graph still looks in, and what was dropped.

A tensor the user still holds must get the same graph however many traces ran since (issue
19): a finished session is kept while any tensor of its graphs is alive (its records hold
weak anchors only, and the data read from the backward: logs, dumps, layer groups), plus
always the newest two. The bound: at most MAX_SESSIONS finished sessions (each at most
MAX_RECORDS backward records); past it the oldest is dropped, and the tensors it could still
vouch for are remembered weakly in LOST, so that their graph says exactly that its trace
annotations were lost instead of quietly becoming a different graph.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from .anchors import Anchor, any_alive, proven

MAX_SESSIONS = 8  # finished sessions kept while a tensor of theirs is alive
ALWAYS_KEPT = 2  # the newest finished sessions, alive or not (as before issue 19)
MAX_LOST = 64  # dropped traces remembered (weakly) to say so

LOST_NOTICE = (
    "The trace() that saw this graph was dropped to bound memory ({why}), so its annotations "
    "(layer groups, gradient shapes, slots, call sites, statistics) are lost: build the graph "
    "(GraphWidget(y) or build_graph(y)) before running more traces, or keep fewer alive."
)


class LostTraces:
    """Weak anchors of traces dropped while tensors of them were alive, and why."""

    def __init__(self, size: int = MAX_LOST) -> None:
        self._items: deque[tuple[tuple[Anchor, ...], str]] = deque(maxlen=size)

    def add(self, anchors: Iterable[Anchor], why: str) -> None:
        kept = tuple(anchors)
        if any_alive(kept):
            self._items.append((kept, why))

    def why(self, root_ptrs: Collection[int]) -> str | None:
        """Why the trace of the graph with these roots was dropped, if it provably was."""
        wanted = set(root_ptrs)
        self._items = deque(((a, w) for a, w in self._items if any_alive(a)), self._items.maxlen)
        for anchors, why in reversed(self._items):
            if wanted and proven(anchors, wanted) == wanted:
                return why
        return None

    def clear(self) -> None:
        self._items.clear()


LOST = LostTraces()


class RecentSessions:
    """The finished traces build_graph looks in, newest last (see the module docstring)."""

    def __init__(self, size: int = MAX_SESSIONS) -> None:
        self._items: list[Any] = []
        self._size = size

    def add(self, session: Any) -> None:
        if session in self._items:
            self._items.remove(session)
        self._items.append(session)
        self._prune()

    def _prune(self) -> None:
        n = len(self._items)
        keep = [s for k, s in enumerate(self._items) if k >= n - ALWAYS_KEPT or s.alive()]
        while len(keep) > self._size:
            dropped = keep.pop(0)
            LOST.add(dropped.kept_anchors(), f"more than {self._size} finished traces kept")
        for s in keep[: max(len(keep) - ALWAYS_KEPT, 0)]:
            s.let_go_of_model()  # kept only for its tensors: the model need not stay alive
        self._items = keep

    def newest_first(self) -> Iterator[Any]:
        return reversed(list(self._items))

    def clear(self) -> None:
        self._items.clear()
        LOST.clear()
