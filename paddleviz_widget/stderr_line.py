"""One line of ours on stderr, and nowhere else.

``print(..., file=sys.stderr)`` is not that: in a process started with fd 2 closed (`2>&-`, some
daemon and job launchers) Python sets ``sys.stderr`` to None and ``print(file=None)`` writes to
**stdout**, into the user's output; a stderr piped into a reader that has gone
(BrokenPipeError) or closed by the user (ValueError) raised into the caller, which in a
watched run is the user's backward. Where stderr cannot take the line it is dropped, as
Python drops its own messages there.
"""

from __future__ import annotations

import contextlib
import sys


def say(text: str) -> None:
    """``text`` and a newline on ``sys.stderr``, after what the user's stdout holds so far."""
    with contextlib.suppress(AttributeError, ValueError, OSError):  # None, closed, broken
        sys.stdout.flush()  # so that our line comes after the output it follows
    stream = sys.stderr
    if stream is None:
        return
    with contextlib.suppress(ValueError, OSError):
        stream.write(f"{text}\n")
        stream.flush()
