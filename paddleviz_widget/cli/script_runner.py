"""Run a Python file the way ``python SCRIPT.py ARGS`` would, and say how it ended.

``sys.argv`` (its first item the script's absolute path, like ``__file__``), ``sys.path[0]``
(the script's directory) and ``__name__ == "__main__"`` are set as Python sets them (and put
back afterwards). An exception that escapes the script is printed
to stderr as Python prints it, with the frames of this runner left out; ``sys.exit(0)`` (or
``sys.exit()``) is success, like the end of the file.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path
from types import TracebackType

from ..stderr_line import say
from .uncaught import INTERRUPTED, report


def run_script(script: str | Path, args: list[str]) -> int:
    """Run ``script`` with ``args``; its exit status (0: it finished or exited with 0)."""
    return script_ending(script, args)[0]


def script_ending(script: str | Path, args: list[str]) -> tuple[int, BaseException | None]:
    """run_script's status, and what ended the script early: its exception, or the SystemExit
    of a non-zero status (None: it finished, or exited with 0)."""
    # Absolute, as Python makes __file__ and the traceback's file names (runpy puts the same
    # path in sys.argv[0], where Python keeps the path as typed: same file, same basename).
    path = os.path.abspath(script)
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *args]
    sys.path.insert(0, str(Path(path).resolve().parent))
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as stop:
        status = _exit_status(stop.code)
        return status, stop if status else None
    except BaseException as error:  # the script's own failure, reported as Python would
        _print_script_error(error, path)
        return INTERRUPTED if isinstance(error, KeyboardInterrupt) else 1, error
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    return 0, None


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` gives: None -> 0, an int as is, anything else is
    printed to stderr and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    say(str(code))
    return 1


def _print_script_error(error: BaseException, path: str) -> None:
    report(error, _from_script(error.__traceback__, path))


def _from_script(tb: TracebackType | None, path: str) -> TracebackType | None:
    """The traceback from the script's first frame on (None if it never ran: a syntax
    error, which Python prints without frames too)."""
    while tb is not None and tb.tb_frame.f_code.co_filename != path:
        tb = tb.tb_next
    return tb
