"""A run as the reader sees it: "running" only while its writer is alive; the same run as
the one read before, or another written into its directory since."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from . import format as fmt
from .errors import RunLogError


def effective_status(meta: dict[str, Any]) -> str:
    """ "running" in run.json, but the writing process is gone from this host: "stopped"
    (SIGKILL, a crash). On another host it cannot be told: "running"."""
    status = str(meta.get("status", "running"))
    if status != "running":
        return status
    pid, host = meta.get("pid"), meta.get("host")
    # A pid no process can have (a damaged run.json: os.kill raised OverflowError past 2**31-1,
    # and 0 or -1 would ask about our own process group or every process) tells nothing.
    if type(pid) is not int or not 0 < pid < 2**31 or host != socket.gethostname():
        return status
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "stopped"
    except PermissionError:
        pass  # someone else's live process
    return status


def last_write(path: Path) -> float | None:
    """When the run last wrote a step (seconds since the epoch): the tail's modification time
    (appended every step, made anew after each part), else run.json's. A process gone without
    closing its log (SIGKILL, out of memory; a crash on another host)
    stays "running" in run.json: this is how long it has been silent."""
    for name in (fmt.TAIL, fmt.META):
        try:
            return (path / name).stat().st_mtime
        except OSError:
            continue
    return None


# What tells one run from another in the same directory: its writer and when it started.
_IDENTITY = ("started", "pid", "host", "run_id", "rank")


def same_run(path: Path, old: dict[str, Any], new: dict[str, Any]) -> None:
    """RunLogError when ``path`` now holds another run than the one read (deleted and
    written again while open): its parts were read on top of the old run's, silently."""
    if all(old.get(k) == new.get(k) for k in _IDENTITY) and old["params"] == new["params"]:
        return
    raise RunLogError(
        f"{path} now holds another run (started {new.get('started')}; the one read here "
        f"started {old.get('started')}): open it again (open_run, GraphWidget.from_run) to "
        "read the new run"
    )


class SameRun:
    """``check(path, meta)``: RunLogError unless ``path`` still holds the run whose run.json
    was read as ``meta`` (same_run), or says it is gone. For files read on demand long after
    the opening (a rank's log or digests when the explorer first shows it): a re-run into the
    same directory writes files of the same names. run.json is read again only when its
    stat changed (a rank's digests are read at each step picked)."""

    def __init__(self) -> None:
        self._stamps: dict[Path, tuple[int, int]] = {}

    def check(self, path: Path, meta: dict[str, Any]) -> None:
        from .meta_read import read_meta

        try:
            stat = (path / fmt.META).stat()
        except FileNotFoundError:
            raise RunLogError(
                f"{path} no longer holds the run read here (its {fmt.META} is gone: the "
                "directory was deleted or moved): open the run again where it is now"
            ) from None
        stamp = (stat.st_ino, stat.st_mtime_ns)
        if self._stamps.get(path) != stamp:
            same_run(path, meta, read_meta(path))
            self._stamps[path] = stamp


def stopped_notes(metas: dict[int, dict[str, Any]]) -> list[str]:
    """The multi-rank reader's notes for ranks that did not finish: those stopped by an error
    (run.json's ``error``: in a data-parallel job, likely the first to go), then those whose
    process is gone with the log still open (killed, or aborted once a peer stopped: the
    launcher's SIGTERM, a collective's timeout)."""
    raised: dict[str, list[int]] = {}
    gone: list[int] = []
    for r, meta in sorted(metas.items()):
        if effective_status(meta) != "stopped":
            continue
        error = meta.get("error")
        if error:
            raised.setdefault(str(error), []).append(r)
        else:
            gone.append(r)
    notes = [
        f"rank{'s' if len(rs) > 1 else ''} {span(rs)} stopped by {error}: read up to "
        f"{'their' if len(rs) > 1 else 'its'} last step"
        for error, rs in raised.items()
    ]
    if gone:
        many = len(gone) > 1
        notes.append(
            f"rank{'s' if many else ''} {span(gone)} ended without closing "
            f"{'their logs' if many else 'its log'} (the process is gone: killed by a signal or "
            "out of memory, or aborted by the launcher or a collective's timeout once another "
            f"rank stopped): read up to {'their' if many else 'its'} last step"
        )
    return notes


def span(ranks: Any) -> str:
    """[0, 1, 2, 3, 5, 7, 8] -> "0-3, 5, 7-8"."""
    runs: list[list[int]] = []
    for r in sorted(int(x) for x in ranks):
        if runs and r == runs[-1][1] + 1:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
