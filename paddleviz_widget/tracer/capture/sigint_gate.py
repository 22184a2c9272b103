"""A watched run's steps are recorded whole: a Ctrl-C that comes while one is being recorded
is delivered once it is, as from a plain backward when it returns.

Python raises a KeyboardInterrupt at the next line of Python, which right after a watched
backward is the run log's: a Ctrl-C there (a notebook's interrupt button, a script's Ctrl-C)
left the log half-written (a step queued without its loss: the last part failed with
pyarrow's ArrowInvalid on stderr and run.json stayed "running"), or, in a loop that catches
it and goes on, the step unrecorded or its number not advanced (the next step written under
the same number).
Shifting signal handlers per step would cost two system calls (~10-25 us here) on steps
that must cost microseconds, so one handler stays for the whole watched block and a step
only sets an attribute. (So an uncaught Ctrl-C's traceback ends in this handler's line.)
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any


class SigintGate:
    """``closed`` while a step is recorded; ``open()`` delivers what came meanwhile."""

    def __init__(self) -> None:
        self.closed = False
        self._waiting: Any = None  # the frame of a Ctrl-C that came while closed
        self._previous: Callable[[int, Any], Any] | None = None
        # The main thread, once installed: a Ctrl-C is raised there, so only its steps hold
        # it. A step of a thread the block started closed the gate too, and its open() then
        # raised the main thread's KeyboardInterrupt in that training thread instead.
        self.owner: int | None = None

    def install(self) -> Callable[[], None]:
        """The gate's handler in place of a Python one (in the main thread only: SIG_IGN
        and SIG_DFL raise nothing into a step); returns the undo."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = signal.getsignal(signal.SIGINT)
        if not callable(previous):
            return lambda: None
        try:
            signal.signal(signal.SIGINT, self._on_sigint)
        except (ValueError, OSError):  # (an embedding interpreter without signals)
            return lambda: None
        self._previous = previous
        self.owner = threading.get_ident()

        def undo() -> None:
            if threading.current_thread() is not threading.main_thread():
                return  # a block exited in another thread: the handler passes Ctrl-C on
            if signal.getsignal(signal.SIGINT) == self._on_sigint:  # not one set since
                signal.signal(signal.SIGINT, previous)

        return undo

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self.closed:
            self._waiting = frame
        elif self._previous is not None:
            # (the last line of an uncaught Ctrl-C's traceback in a watched block)
            self._previous(signum, frame)  # your Ctrl-C, passed on to the handler before

    def open(self) -> None:
        self.closed = False
        if self._waiting is not None and self._previous is not None:
            frame, self._waiting = self._waiting, None
            self._previous(signal.SIGINT, frame)  # your Ctrl-C, once the step is recorded
