"""The last few finished traces, for build_graph to find the one that recorded a graph."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .session import TraceSession


class _RecentSessions:
    """The last few finished traces, newest last, for build_graph to find its own in."""

    def __init__(self, size: int = 2) -> None:
        self._items: deque[TraceSession] = deque(maxlen=size)

    def add(self, session: TraceSession) -> None:
        if session in self._items:
            self._items.remove(session)
        self._items.append(session)

    def newest_first(self) -> Iterator[TraceSession]:
        return reversed(list(self._items))

    def clear(self) -> None:
        self._items.clear()


RECENT_SESSIONS = _RecentSessions()
