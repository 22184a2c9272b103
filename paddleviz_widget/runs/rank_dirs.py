"""The run dir of a multi-rank job, as one rank sees it, without asking the other ranks
(no collective): before writing, is it free for this job; at the end, did the ranks it
expects write beside it (ranks that disagree about the run dir, or a node that does not share
the filesystem, leave theirs elsewhere)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from ..digits import is_int_text
from . import format as fmt
from .errors import RunLogError
from .job_rank import JobRank
from .run_dir_taken import free_sibling, taken
from .status import effective_status

NEW_DIR = "give this launch a new directory (e.g. runs/exp2) or delete the old logs"


def check_run_dir(run_dir: str | os.PathLike[str], job: JobRank) -> None:
    """RunLogError when ``run_dir`` holds logs another job (or a lone process) wrote."""
    path = Path(run_dir)
    if path.exists() and not path.is_dir():
        raise RunLogError(f"{path} is a file, not a directory: give run_dir a folder")
    check_writable(path)
    if not path.is_dir():
        return
    ranked = _rank_logs(path)
    own = fmt.rank_dir(path, job.rank) if job.launched else path
    if job.launched:  # another job's logs first: every rank of this job says the same then
        _refuse_other_job(path, job, ranked)
    if (own / fmt.META).exists() and (job.launched or not ranked):
        raise RunLogError(_written_now(own, job.launched))
    if not job.launched:
        if ranked:
            raise RunLogError(
                f"{path} holds the logs of a multi-rank job ({_listed(sorted(ranked))}): a "
                f"process started alone writes one run log; {NEW_DIR}"
            )
        return
    if (path / fmt.META).exists():
        raise RunLogError(
            f"{path} holds the run log of a single process ({fmt.META}): rank {job.rank} of "
            f"{job.world_size} would write beside it; {NEW_DIR}"
        )


def _refuse_other_job(path: Path, job: JobRank, ranked: dict[int, dict[str, Any]]) -> None:
    others = {r: meta for r, meta in ranked.items() if meta.get("run_id") != job.run_id}
    if others:
        ids = sorted({str(m.get("run_id")) for m in others.values()})
        live = any(effective_status(m) == "running" for m in others.values())
        raise RunLogError(
            f"{path} holds rank logs of another job (run_id {', '.join(ids)}: "
            f"{_listed(sorted(others))}); this job is {job.run_id}: "
            + ("give this launch a new directory (e.g. runs/exp2): that job may still be "
               "writing them" if live else NEW_DIR)
        )  # fmt: skip


def _written_now(path: Path, launched: bool) -> str:
    """The refusal of ``path``'s run log: a launched rank's NEW_DIR, a lone process's
    run_dir_taken.py, but not "delete" a log a live process is writing (a watched trace()
    nested in another on the same run_dir: deleting it would wreck the outer run)."""
    try:
        meta = json.loads((path / fmt.META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = None
    if not isinstance(meta, dict) or effective_status(meta) != "running":
        return f"{path} already holds a run log: {NEW_DIR}" if launched else taken(path, meta)
    if meta.get("pid") == os.getpid() and meta.get("host") == socket.gethostname():
        return (
            f"{path} already holds a run log that this process is writing now (a "
            f"trace(run_dir=) already open, started {meta.get('started')}): a trace() inside "
            "it needs no run_dir (the outer one records every step), or give it a directory "
            "of its own"
        )
    free = free_sibling(path)
    return (
        f"{path} already holds a run log that process {meta.get('pid')} on "
        f"{meta.get('host')} is writing now (started {meta.get('started')}): give this run a "
        f'new directory (trace(..., run_dir="{free}"), or --run-dir {free})'
    )


def check_writable(path: Path) -> None:
    """RunLogError unless the run log can be made at ``path``: its nearest existing ancestor
    (itself, if it exists) is a directory this process may write into. Checked before the
    training: else the CLI's script trained with no log, said only at its first step."""
    there = path
    while not there.exists() and there.parent != there:
        there = there.parent
    if not there.is_dir():
        raise RunLogError(f"cannot make the run log {path}: {there} is a file, not a directory: "
                          "give run_dir a folder")  # fmt: skip
    if not os.access(there, os.W_OK | os.X_OK):
        raise RunLogError(
            f"cannot make the run log {path}: {there} cannot be written (a read-only "
            "filesystem, or no permission): give run_dir a folder you can write to"
        )


def siblings_seen(
    run_dir: str | os.PathLike[str], job: JobRank, ranks: list[int] | None
) -> dict[str, list[int]]:
    """The ranks this one expects beside it that it does not see: ``missing`` (no log) and
    ``other_run`` (a log of another run_id)."""
    expected = range(job.world_size) if ranks is None else ranks
    found = _rank_logs(Path(run_dir))
    missing = [r for r in expected if r != job.rank and r not in found]
    other = [r for r in expected if r in found and found[r].get("run_id") != job.run_id]
    return {"missing": missing, "other_run": other}


def siblings_message(
    run_dir: str | os.PathLike[str], job: JobRank, seen: dict[str, list[int]]
) -> str:
    parts = []
    if seen["missing"]:
        parts.append(f"no log of rank(s) {_ranks(seen['missing'])}")
    if seen["other_run"]:
        parts.append(f"rank(s) {_ranks(seen['other_run'])} of another run_id")
    return (
        f"rank {job.rank} of run {job.run_id} finds {' and '.join(parts)} under {run_dir}: "
        "the ranks were given different run dirs, a node does not share this filesystem, or "
        "those ranks stopped before recording; each rank's log is its own, in its rank-NNNNN dir"
    )


def _rank_logs(path: Path) -> dict[int, dict[str, Any]]:
    """rank -> its run.json (``{}`` when unreadable) for every RUN_DIR/rank-NNNNN/run.json."""
    found: dict[int, dict[str, Any]] = {}
    try:
        entries = list(os.scandir(path))
    except OSError:
        return found
    for entry in entries:
        digits = entry.name[len(fmt.RANK_PREFIX) :]
        if not entry.name.startswith(fmt.RANK_PREFIX) or not is_int_text(digits):
            continue
        meta_path = Path(entry.path) / fmt.META
        if not meta_path.is_file():
            continue
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            meta = {}
        found[int(digits)] = meta if isinstance(meta, dict) else {}
    return found


def _listed(ranks: list[int]) -> str:
    shown = ", ".join(fmt.rank_dir("", r).name for r in ranks[:8])
    return shown + (f" and {len(ranks) - 8} more" if len(ranks) > 8 else "")


def _ranks(ranks: list[int]) -> str:
    shown = ", ".join(map(str, ranks[:16]))
    return shown + (f" and {len(ranks) - 16} more" if len(ranks) > 16 else "")
