"""Ctrl-C while Paddle formats an op's Python stack: delivered once it is done, not a crash.

Under FLAGS_call_stack_level=3 (trace()'s call sites, its first backward passes) Paddle 3.3
calls ``traceback.format_stack()`` from C++ for every op it creates and reads the list it
returns without checking for an error (pybind/eager_utils.cc ``SetPythonStack``). A Ctrl-C
whose KeyboardInterrupt is raised inside that call makes it return NULL: the process dies of
a segmentation fault (half of the Ctrl-Cs in a loop of small ops here) instead of the
KeyboardInterrupt the user's loop or notebook expects. While the flag is on, SIGINT goes to
``on_sigint``: inside that call it asks for the signal again a moment later, until the
signal comes outside it, where the handler that was there gets it (Python's raises the
KeyboardInterrupt at the op's caller); anywhere else at once.
"""

from __future__ import annotations

import _thread
import signal
import threading
import traceback
from collections.abc import Callable
from typing import Any

_TRACEBACK_FILE = traceback.__file__


def _inside_stack_formatting(frame: Any) -> bool:
    """Whether Python runs traceback's code (Paddle's format_stack call) at this frame."""
    while frame is not None:
        if frame.f_code.co_filename == _TRACEBACK_FILE:
            return True
        frame = frame.f_back
    return False


def _again_soon() -> None:
    """SIGINT again in a millisecond, from another thread: by then the handler has returned
    and Python goes on with the stack (mostly done with it). Asked from the handler itself,
    the next check (signal.raise_signal, os.kill, _thread.interrupt_main alike) runs the
    handler again inside it, recursing until RecursionError, the very crash."""
    timer = threading.Timer(0.001, _thread.interrupt_main, args=(signal.SIGINT,))
    timer.daemon = True
    timer.start()


def sigint_outside_stacks() -> Callable[[], None]:
    """Route SIGINT through ``on_sigint`` (below) until the returned undo is called. Nothing
    is changed outside the main thread, or when no Python handler gets SIGINT (SIG_IGN,
    SIG_DFL: no KeyboardInterrupt is raised inside Paddle's call then)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        return lambda: None

    def on_sigint(signum: int, frame: Any) -> None:
        import sys

        # The frame the signal interrupted, not ``frame``: a deferred delivery
        # (interrupts.py) passes one long gone.
        if _inside_stack_formatting(sys._getframe(1)):
            _again_soon()
            return
        previous(signum, frame)  # your Ctrl-C, passed on to the handler before

    try:
        signal.signal(signal.SIGINT, on_sigint)
    except (ValueError, OSError):  # (an embedding interpreter without signals)
        return lambda: None

    def undo() -> None:
        # Called by the backward that ends the first steps, which may run in a thread the
        # block started: signal.signal raised ValueError there, into the user's training
        # thread. The block's exit (its restore list) calls it again, in the main thread.
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGINT) is on_sigint:  # not a handler the user set since
            signal.signal(signal.SIGINT, previous)

    return undo
