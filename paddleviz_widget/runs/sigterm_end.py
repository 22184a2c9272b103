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
A Python handler runs between bytecodes of the main thread, so a main thread held inside one
long C++ call (a collective that hangs once a peer died: the launcher's SIGTERM then) would
have outlived the signal that killed it at once before. So where the handler before was not
the user's, a watchdog thread hears of each signal through the wakeup fd (only where no one
else set one) and, if our handler has not started GRACE seconds after a SIGTERM, writes
run.json itself, puts the handler back and sends the signal again: the process dies as it
would have, GRACE later.
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

GRACE = 0.5  # seconds the main thread has to start our handler before the watchdog acts

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

    claimed = threading.Lock()  # the handler's or the watchdog's: run.json written once
    written = threading.Event()  # ... and done: the other waits for it before dying

    def handler(signum: int, frame: Any) -> None:
        if os.getpid() != pid:  # a fork's child that kept it: the log is the parent's
            put_back()
            os.kill(os.getpid(), signum)
            return
        if claimed.acquire(blocking=False):
            with contextlib.suppress(Exception):  # (run.json's words never stop the signal)
                terminated()
            written.set()
            if callable(previous):
                claimed.release()  # (a later SIGTERM is said again)
                written.clear()
                previous(signum, frame)  # the user's handler, as before; raising goes on up
                with contextlib.suppress(Exception):
                    resumed()
                return
        else:  # the watchdog is writing it: not cut off by dying first
            written.wait(2)
        put_back()
        os.kill(os.getpid(), signum)  # dies here (default or Paddle's handler)

    def held() -> None:
        """The watchdog, GRACE after a SIGTERM our handler has not started on: as it would."""
        if claimed.acquire(blocking=False):
            with contextlib.suppress(Exception):
                terminated()
            written.set()
            assert raw is not None
            raw()  # (signal.signal is the main thread's only: sigaction is any thread's)
            os.kill(os.getpid(), signal.SIGTERM)

    try:
        signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # (an embedding interpreter without signals)
        return lambda: None
    stop_watchdog = _watchdog(held) if raw is not None and not callable(previous) else None

    def undo() -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if stop_watchdog is not None:
            stop_watchdog()
        if signal.getsignal(signal.SIGTERM) is handler:  # not one the user set since
            put_back()

    return undo


def _watchdog(held: Callable[[], None]) -> Callable[[], None] | None:
    """A thread reading the wakeup fd (each signal's number, written by Python's C handler
    whichever thread is running) that calls ``held()`` when a SIGTERM's handler has not run
    GRACE later; its stop. None where another wakeup fd is set (asyncio's): left alone."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        before = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except (ValueError, OSError):
        before = None
    if before != -1:  # someone's own, or none could be set: theirs stays
        if before is not None:
            signal.set_wakeup_fd(before)
        os.close(read_end)
        os.close(write_end)
        return None
    _OURS[write_end] = read_end
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                got = os.read(read_end, 64)
            except OSError:
                return
            if not got or done.is_set():
                return
            if signal.SIGTERM in got and not done.wait(GRACE):
                held()

    thread = threading.Thread(target=watch, name="paddleviz_widget-sigterm", daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        if _OURS.pop(write_end, None) is None:
            return  # a fork's child: its fds closed already (_unset_in_child), maybe reused
        with contextlib.suppress(ValueError, OSError):
            current = signal.set_wakeup_fd(-1)
            if current != write_end:  # another set since: theirs again
                signal.set_wakeup_fd(current)
        with contextlib.suppress(OSError):
            os.write(write_end, b"\0")  # wakes the thread, which then ends
        thread.join(timeout=1)
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)

    return stop


# Our wakeup fds' write ends. A fork's child inherits the wakeup fd but not the watchdog: its
# signals' bytes went into the parent's pipe, whose watchdog took a child's SIGTERM (a
# DataLoader worker's end) for its own and killed the parent. The child's is unset at once.
_OURS: dict[int, int] = {}  # write end: read end


def _unset_in_child() -> None:
    if not _OURS:
        return
    with contextlib.suppress(ValueError, OSError):
        current = signal.set_wakeup_fd(-1)
        if current not in _OURS:
            signal.set_wakeup_fd(current)
    for fd in (*_OURS, *_OURS.values()):
        with contextlib.suppress(OSError):
            os.close(fd)
    _OURS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_unset_in_child)
