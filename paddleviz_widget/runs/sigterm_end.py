"""A watched run ended by SIGTERM (`kill PID`, a job scheduler's or a launcher's stop) says so
in run.json, as a Ctrl-C's says "KeyboardInterrupt"; the process still dies by the signal.

Before, Paddle's own SIGTERM handler (a C++ one: "FatalError: `Termination signal` is
detected") or the default action ended the process at once, with no Python run after it:
run.json said "running" (a reader on another host could never tell the run was over).

While a run log is open (in the main thread) a Python handler stands in for the one before
it. On SIGTERM it writes run.json "stopped" with the signal in words (log_writer.terminated:
run.json alone, replaced whole, so it is right wherever the step being recorded was cut;
the steps since the last part stay in the tail, which readers read), then:
- the handler before was Paddle's C one or the default: it is put back, exactly (its raw
  `sigaction`, saved before ours), and the signal sent again: the process dies by SIGTERM as
  it would have, Paddle's message included, with no Python finally block or atexit run;
- it was the user's own Python handler: that is called, as it would have been. If it returns
  (a graceful stop: a flag the loop reads), run.json says "running" again and the run's
  own end says how it ended; if it raises (sys.exit), the run log's end names the signal.
SIG_IGN (the signal ignored) is left alone, and so is a handler the user sets after ours.
A Python handler runs between bytecodes of the main thread: a main thread held inside one
long C++ call (a collective that hangs) gets the signal when that call returns, where before
it died at once; a launcher's SIGKILL after its timeout still ends it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

WORDS = "SIGTERM: the process was terminated (kill, a job scheduler or launcher stopping it)"

# glibc's struct sigaction is 152 bytes on x86-64, macOS's 16: room to spare for any
_SIGACTION_BYTES = 512


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        return libc if hasattr(libc, "sigaction") else None
    except OSError:
        return None


def _raw_handler() -> Callable[[], None] | None:
    """The C-level SIGTERM action now (Paddle's handler, which signal.getsignal shows as
    None), and how to put it back exactly; None where libc cannot be asked."""
    libc = _libc()
    if libc is None:
        return None
    saved = ctypes.create_string_buffer(_SIGACTION_BYTES)
    if libc.sigaction(signal.SIGTERM, None, saved) != 0:
        return None
    return lambda: libc.sigaction(signal.SIGTERM, saved, None)


def on_sigterm(terminated: Callable[[], None], resumed: Callable[[], None]) -> Callable[[], None]:
    """Our handler in place until the returned undo: ``terminated()`` writes run.json's end,
    ``resumed()`` takes it back (the user's handler returned: the run goes on)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # (signal.signal raises there; the block's thread is not main)
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_IGN:
        return lambda: None
    raw = _raw_handler()
    pid = os.getpid()

    def put_back() -> None:
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
        if raw is not None:
            raw()  # Paddle's C++ handler (or Python's own for a Python one), as it was

    def handler(signum: int, frame: Any) -> None:
        if os.getpid() != pid:  # a fork's child that kept it: the log is the parent's
            put_back()
            os.kill(os.getpid(), signum)
            return
        with contextlib.suppress(Exception):  # (run.json's words never stop the signal)
            terminated()
        if callable(previous):
            previous(signum, frame)  # the user's handler, as before; raising goes on up
            with contextlib.suppress(Exception):
                resumed()
            return
        put_back()
        os.kill(os.getpid(), signum)  # dies here (default or Paddle's handler)

    try:
        signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # (an embedding interpreter without signals)
        return lambda: None

    def undo() -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is handler:  # not one the user set since
            put_back()

    return undo
