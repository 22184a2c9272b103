"""What a directory that is not a run log holds below it: the run logs a user may have meant
(runs/ holding exp1/, exp2/), named in the reader's error instead of "not a run log"."""

from __future__ import annotations

from pathlib import Path

from . import format as fmt

_NAMED = 8  # more are counted, not listed


def logs_below(path: Path) -> str | None:
    """The sentence naming the run logs (or multi-rank jobs) one level below ``path`` and how
    to open one; None when there are none."""
    logs: list[str] = []
    jobs: list[str] = []
    try:
        children = sorted(p for p in path.iterdir() if p.is_dir())
    except OSError:
        return None
    for child in children:
        if (child / fmt.META).is_file():
            (jobs if child.name.startswith(fmt.RANK_PREFIX) else logs).append(child.name)
        elif any((r / fmt.META).is_file() for r in child.glob(f"{fmt.RANK_PREFIX}*")):
            logs.append(child.name)
    if jobs and not logs:  # rank-NNNNN/ logs: a multi-rank job's run dir
        return (
            f"{path} holds the rank logs of a multi-rank run ({_names(jobs)}): open them "
            "together with open_ranks(...) or GraphWidget.from_run(...), or one rank's "
            f"directory with open_run (e.g. {path / jobs[0]})"
        )
    if not logs:
        return None
    return (
        f"{path} is not a run log but holds run logs {_names(logs)}: open one of them "
        f"(e.g. {path / logs[0]})"
    )


def _names(names: list[str]) -> str:
    listed = ", ".join(names[:_NAMED])
    return listed if len(names) <= _NAMED else f"{listed} and {len(names) - _NAMED} more"
