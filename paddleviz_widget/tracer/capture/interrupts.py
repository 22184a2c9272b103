"""Ctrl-C during a backward that calls our Python hooks all along it, delivered as from a
plain backward: once it returns.

Python runs a SIGINT handler at the next line of Python, which inside Paddle's backward is a
hook's: a capture's statistics hooks (GradNode post hooks). Paddle 3.3 then loses the
KeyboardInterrupt raised there, or reports it as ``OSError: (External) KeyboardInterrupt``
(reduce hooks: ``SystemError: ... returned a result with an exception set``): a training
loop's ``except KeyboardInterrupt`` (save a checkpoint, stop cleanly) never saw it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """A Ctrl-C while the block runs is delivered once it ends, to the SIGINT handler that was
    there (Python's own raises KeyboardInterrupt). Outside the main thread (no handler can be
    set there) the block runs as it is."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[Any] = []

    def note(signum: int, frame: Any) -> None:
        got.append(frame)

    try:
        previous = signal.signal(signal.SIGINT, note)
    except (ValueError, OSError):  # (an embedding interpreter without signals)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if got:
            if callable(previous):
                previous(signal.SIGINT, got[0])  # default_int_handler: KeyboardInterrupt
            elif previous == signal.SIG_DFL:
                os.kill(os.getpid(), signal.SIGINT)


def deferred_call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` (a backward) under sigint_deferred()."""
    with sigint_deferred():
        return function(*args, **kwargs)
