"""Which trace() sessions ran one inside another (``with trace(G): ... with trace(D):``).

A graph through both models is seen by both: its layer groups are the union of theirs
(scope_union.py). Kept weakly: a session is no more kept alive here than elsewhere.
"""

from __future__ import annotations

import threading
import weakref
from itertools import count
from typing import Any

_ACTIVE: list[Any] = []  # the sessions inside whose `with` block the program is, outermost first
_RELATED: weakref.WeakKeyDictionary[Any, weakref.WeakSet[Any]] = weakref.WeakKeyDictionary()
_ORDER: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_COUNTER = count()
_THREAD: weakref.WeakKeyDictionary[Any, threading.Thread] = weakref.WeakKeyDictionary()


def refuse_other_thread() -> None:
    """A trace() entered while one in another thread is still active is refused: what a trace
    switches on is process-wide (Paddle's backward entry points, its VLOG level, fd 2, the
    call-stack flag), so two threads' blocks, which end in any order, would put back each
    other's patches: Tensor.backward stayed patched by a finished trace, and both graphs came
    out bare with a notice telling the user to use the trace() they were in."""
    me = threading.current_thread()
    for other in _ACTIVE:
        thread = _THREAD.get(other, me)
        if thread is not me:
            raise RuntimeError(
                f"trace() is already active in thread {thread.name!r}: what it switches on "
                "(Paddle's backward entry points, its log level, stderr) is process-wide, so "
                "one thread traces at a time. Run the traces one after the other, or nest "
                "them in one thread (`with trace(a): with trace(b): ...`)."
            )


def other_threads() -> tuple[threading.Thread, ...]:
    """The threads whose backward calls are not the block's: the main thread, for a trace()
    entered in another thread. That is a notebook training behind itself: its main thread runs
    the cells meanwhile, and each of their backward calls was recorded as a step of the run
    (the two threads' captures at once stopped the run log). Any other thread is the block's:
    one it starts (`with trace(...): t.start(); t.join()`) and a worker that was already
    running (a thread pool's, asyncio.to_thread's: kept from one cell to the next)."""
    main = threading.main_thread()
    return () if threading.current_thread() is main else (main,)


def entered(session: Any) -> None:
    _ORDER[session] = next(_COUNTER)
    if _ACTIVE:  # a single trace() costs this test only
        _RELATED[session] = weakref.WeakSet(_ACTIVE)
        for outer in _ACTIVE:
            _RELATED.setdefault(outer, weakref.WeakSet()).add(session)
    _ACTIVE.append(session)
    _THREAD[session] = threading.current_thread()


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
