"""How a script run by the CLI ends when an exception escapes it: as it would under ``python
SCRIPT.py``. The exception goes to ``sys.excepthook`` (the script's own, if it set one: a
logger's, a crash reporter's), which Python calls for it, not straight to
``traceback.print_exception``; and a KeyboardInterrupt (Ctrl-C) ends the process the way
Python ends it, killed by SIGINT once the interpreter is finalized, not with exit status 130:
a parent sees the signal (``subprocess``: -2; a shell loop around the command stops on it, as
bash does for a child that died of SIGINT).
"""

from __future__ import annotations

import contextlib
import sys
import traceback
from types import TracebackType
from typing import NoReturn

from ..stderr_line import say

# Python's exit status for a KeyboardInterrupt as a shell reports it (128 + SIGINT).
INTERRUPTED = 130

# Set when the script run ended by a KeyboardInterrupt: leave() then ends the process by it.
_interrupted = [False]


def report(error: BaseException, tb: TracebackType | None) -> None:
    """``error`` shown as Python shows an uncaught exception (``tb``: from the script's frame)."""
    if isinstance(error, KeyboardInterrupt):
        _interrupted[0] = True
    with contextlib.suppress(AttributeError, ValueError, OSError):  # None, closed, broken
        sys.stdout.flush()
    hook = getattr(sys, "excepthook", None)
    try:
        if hook is None:
            raise RuntimeError("lost sys.excepthook")
        # Python's own hook prints the exception's __traceback__, not its argument: both
        # start at the script's frame, without the runner's.
        hook(type(error), error.with_traceback(tb), tb)
    except BaseException as failed:  # as Python: the hook's error, then the original
        say("Error in sys.excepthook:")
        _print(type(failed), failed, failed.__traceback__)
        say("\nOriginal exception was:")
        _print(type(error), error, tb)
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stderr.flush()


def _print(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
    if sys.stderr is not None:  # (file=None would print into stdout)
        with contextlib.suppress(ValueError, OSError):
            traceback.print_exception(kind, error, tb, file=sys.stderr)


def leave(status: int) -> NoReturn:
    """End the CLI's process with ``status``, or, when the script was ended by a Ctrl-C,
    by the KeyboardInterrupt itself: Python then kills the process with SIGINT after its
    finalization (atexit handlers, threads joined), as for ``python SCRIPT.py``. Its
    traceback was shown already (report), so it is not shown twice."""
    if _interrupted[0] and status == INTERRUPTED:
        sys.excepthook = _shown_already
        raise KeyboardInterrupt
    raise SystemExit(status)


def _shown_already(*_: object) -> None:
    return None
