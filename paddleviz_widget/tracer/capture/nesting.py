"""Which trace() sessions ran one inside another (``with trace(G): ... with trace(D):``).

A graph through both models is seen by both: its layer groups are the union of theirs
(scope_union.py). Kept weakly: a session is no more kept alive here than elsewhere.
"""

from __future__ import annotations

import weakref
from itertools import count
from typing import Any

_ACTIVE: list[Any] = []  # the sessions inside whose `with` block the program is, outermost first
_RELATED: weakref.WeakKeyDictionary[Any, weakref.WeakSet[Any]] = weakref.WeakKeyDictionary()
_ORDER: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_COUNTER = count()


def entered(session: Any) -> None:
    _ORDER[session] = next(_COUNTER)
    if _ACTIVE:  # a single trace() costs this test only
        _RELATED[session] = weakref.WeakSet(_ACTIVE)
        for outer in _ACTIVE:
            _RELATED.setdefault(outer, weakref.WeakSet()).add(session)
    _ACTIVE.append(session)


def exited(session: Any) -> None:
    if session in _ACTIVE:
        _ACTIVE.remove(session)


def captured_elsewhere(session: Any) -> bool:
    """Whether another trace() records this backward, so this one passes it through: one
    capture (two nested captures of one backward log read each other's lines). The innermost
    trace captures; but a trace without statistics leaves it to one around it that asks for
    them, and a watched run (its run log) records every step it is due, captured or not."""
    if session.watch is not None:
        return False
    if any(s is not session and s._in_backward for s in _ACTIVE):
        return True  # an inner trace is capturing it
    plain = session.history is None
    return plain and any(
        s.history is not None and s.watch is None
        for s in _ACTIVE[: _ACTIVE.index(session)] if session in _ACTIVE
    )  # fmt: skip


def nested_with(session: Any) -> list[Any]:
    """The sessions that ran around or inside this one, and it, in the order they began;
    [] when none did."""
    related = _RELATED.get(session)
    if not related:
        return []
    return sorted([session, *related], key=lambda s: _ORDER.get(s, -1))
