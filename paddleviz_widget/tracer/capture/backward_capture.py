"""Run one backward pass with Paddle's logs switched on and collect what it says about itself.

Sources, best first: the VLOG 6 log (slot names, tensor names, per-edge gradients) captured from
fd 2, and the structured dump (``dump_backward_graph_path``, Paddle >= 3.3: per-edge gradients
and, with FLAGS_call_stack_level=3 set before the forward, a Python stack per GradNode).
The user's log level, stderr and any dump directory they asked for are left as they were.
"""

from __future__ import annotations

import contextlib
import inspect
import tempfile
import time
import weakref
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...gc_pause import gc_paused
from ...graph.model import CallSite
from ..parse.call_sites import parse_call_stack_log
from ..parse.log_parser import (
    KNOWN_LOG_VERSIONS,
    REQUIRED_VLOG_LEVEL,
    ParsedLog,
    parse_glog_records,
)
from ..parse.paddle_dump import BackwardDump, find_dump_files, parse_backward_dot
from . import dump_dirs
from .program_runs import QUIET, loud_again
from .stderr_capture import capture_stderr
from .vlog import (
    VlogUnavailableError,
    get_vlog_level,
    info_logged,
    min_log_level,
    vlog_level,
)

DUMP_KWARG = "dump_backward_graph_path"
CUT_LOG = (
    "Paddle's log of this backward was cut off: the disk of the temporary directory it was "
    "written to ({where}) is full, so edges past its end are annotated from other sources or "
    "left bare; free some space there (or set TMPDIR to a folder with space) and trace again"
)


@dataclass
class CapturedBackward:
    log: ParsedLog | None = None
    dump: BackwardDump | None = None
    call_sites: dict[int, CallSite] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # why a source is missing altogether
    # No dump was asked for: the statistics hooks see every edge's gradient (session.py)
    hooks_instead: bool = False

    @property
    def dump_read_whole(self) -> bool:
        """Paddle's dump of this backward was read with nothing left out: an edge it does not
        name carried no gradient (a PyLayer's backward returned None for that input)."""
        return self.dump is not None and not self.dump.warnings

    @property
    def notes(self) -> list[str]:
        """One line per source that was only partly understood (the parsers' warnings)."""
        lines = [
            *(self.log.warnings if self.log else ()),
            *(self.dump.warnings if self.dump else ()),
        ]
        version = paddle_version_text()
        if lines and not log_format_known(version):
            lines = [f"paddle {version} is not a version whose log format is known "
                     f"({', '.join(KNOWN_LOG_VERSIONS)}): {line}" for line in lines]  # fmt: skip
        return lines


def paddle_version_text() -> str:
    import paddle

    return str(paddle.__version__)


def log_format_known(version: str) -> bool:
    # "0.0.0" is a develop build: newest format, like the latest release.
    return version.startswith("0.0") or version.startswith(
        tuple(v + "." for v in KNOWN_LOG_VERSIONS)
    )


# Weakly keyed: inside a nested trace() the function is the outer trace's wrapper of
# Tensor.backward, which holds that session and its model (a plain cache kept them forever).
_ACCEPTS: weakref.WeakKeyDictionary[Callable[..., Any], bool] = weakref.WeakKeyDictionary()


def accepts_dump_kwarg(function: Callable[..., Any]) -> bool:
    try:
        return _ACCEPTS[function]
    except (KeyError, TypeError):  # TypeError: not weakly referable
        pass
    try:
        accepts = DUMP_KWARG in inspect.signature(function).parameters
    except (TypeError, ValueError):
        accepts = False
    with contextlib.suppress(TypeError):
        _ACCEPTS[function] = accepts
    return accepts


def _newest_dump(
    directory: Path, since: float, call_sites: bool
) -> tuple[BackwardDump | None, str | None]:
    files = find_dump_files(directory)
    backward = files.get("backward")
    if backward is None or backward.stat().st_mtime < since:
        return None, None  # nothing written by *this* backward (e.g. a user dir with old dumps)
    stack = files.get("call_stack") if call_sites else None
    stack_text = stack.read_text(errors="replace") if stack is not None else None
    return parse_backward_dot(backward.read_text(errors="replace")), stack_text


def replay_dump_available() -> bool:
    """Whether ``paddle.grad`` writes the dump that pairs a replay's copied nodes with ours."""
    import paddle.base.dygraph.base as dygraph_base

    return accepts_dump_kwarg(dygraph_base.grad)


def _dump_dir() -> str | None:
    """A temporary directory for Paddle's dump, or None where none can be made (TMPDIR, /tmp,
    /var/tmp and the working directory all unwritable): the user's backward must still run.
    The log then is the account of the edges (the same edges; call sites are the lines that
    called each layer, as for a model too big for per-op stacks)."""
    try:
        return dump_dirs.make()  # (locked: one a killed process leaves is swept later)
    except OSError:
        return None


def logging_all() -> bool:
    """Whether the VLOG level in effect (the user's GLOG_v) is at least the capture's."""
    return get_vlog_level() >= REQUIRED_VLOG_LEVEL


def run_captured(
    run: Callable[[dict[str, Any]], Any],
    *,
    function: Callable[..., Any] | None,
    user_dump_dir: str | None = None,
    quiet: bool = False,
    log: bool = True,
    call_sites: bool = True,
    dump: bool = True,
    log_possible: bool = True,
) -> tuple[Any, CapturedBackward]:
    """Call ``run(extra_kwargs)`` (which runs the backward) under capture.

    ``function`` is the Paddle entry point ``run`` calls, to know whether it takes a dump path
    (None: no dump wanted). A dump directory the user passed is used and kept; otherwise a
    temporary one is made and removed. ``quiet``: the user did not ask for this backward, so
    Paddle's warnings about it are not theirs to see either. ``log=False`` skips the VLOG
    capture (the costly part: slot names and tensor names) and keeps only the dump.
    ``call_sites=False`` leaves the dump's call-stack file unread (``paddle.grad`` writes it
    for its copies of the nodes, whose pointers are not the graph's). ``dump=False``: the
    statistics hooks see every edge, so no dump is written (one the user asked for is still
    read) and the log is not forced on where Paddle writes no dump. ``log_possible=False``: not
    even then (a program node that would print its program into the user's output under VLOG).
    """
    captured = CapturedBackward(hooks_instead=not dump and user_dump_dir is None)
    extra: dict[str, Any] = {}
    tmp_dir: str | None = None
    # The user's own GLOG_v is at least ours: the log is theirs to see as without trace() (a
    # line does not say its level, so below ours it is kept), and no dump of ours adds its
    # "Save backward graph to file" lines to it (the log alone annotates every edge).
    theirs = log and not quiet and min_log_level() == 0 and logging_all()
    if user_dump_dir is not None:
        extra[DUMP_KWARG] = user_dump_dir
    elif dump and not theirs and function is not None and accepts_dump_kwarg(function):
        tmp_dir = _dump_dir()
        if tmp_dir is not None:
            extra[DUMP_KWARG] = tmp_dir
    if DUMP_KWARG not in extra and dump and log_possible:
        # Paddle < 3.3 has no dump: the log is the only account of the edges, and asking for it
        # is what puts the way to get it (GLOG_v before import) into ``problems``.
        log = True
    started = time.time() - 1.0  # mtime granularity
    try:
        if log:
            logged = True
            # Severities the user's GLOG_minloglevel lets through still reach them; the log is
            # written for us whatever it says (info_logged), and kept.
            passed = ("I" if theirs else "") + ("" if quiet else "WEF"[min(min_log_level(), 3) :])
            with gc_paused(), capture_stderr(passed=passed) as cap:
                try:
                    # (a level already at ours is left alone: never lowered, no "Set the
                    # VLOG level" line of ours in the user's log)
                    level = nullcontext() if theirs else vlog_level(REQUIRED_VLOG_LEVEL)
                    with info_logged(), level:
                        QUIET.capturing = True  # program nodes run with VLOG off
                        try:
                            result = run(extra)
                        finally:
                            QUIET.capturing = False
                            loud_again()
                except VlogUnavailableError as exc:
                    captured.problems.append(str(exc))
                    logged = False  # no log was written: nothing to parse or warn about
                    cap.release()  # what Paddle writes now is the user's, INFO lines too
                    result = run(extra)
            if logged:
                with gc_paused():
                    captured.log = parse_glog_records(cap.records)
                if cap.cut:
                    captured.problems.append(CUT_LOG.format(where=tempfile.gettempdir()))
        elif quiet:  # no log wanted, but Paddle's warnings about our replay stay ours
            with capture_stderr(pass_warnings=False):
                result = run(extra)
        else:
            result = run(extra)
        if DUMP_KWARG in extra:
            captured.dump, stack_text = _newest_dump(Path(extra[DUMP_KWARG]), started, call_sites)
            if stack_text:
                captured.call_sites = parse_call_stack_log(stack_text)
    finally:
        if tmp_dir is not None:
            dump_dirs.remove(tmp_dir)
    return result, captured
