"""The words for a run dir that already holds a finished (or stopped) run log, when one process
starts another run there: a restarted script, a notebook cell run again, the CLI a second time.
The refusal used to say "give this launch a new directory ... or delete the old logs", which
speaks of a launch to someone who re-ran a cell and does not say that a run log is never
resumed. It now says so, and the fix for both (trace(run_dir=...) in a notebook or script,
--run-dir on the command line) with a directory name that is free."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


def taken(path: Path, meta: dict[str, Any] | None) -> str:
    """RunLogError's words for ``path``, whose run.json reads ``meta`` (None: unreadable)."""
    what = ""
    if isinstance(meta, dict):
        bits = [
            str(meta.get("status", "")),
            f"started {meta['started']}" if meta.get("started") else "",
        ]
        what = f" ({', '.join(b for b in bits if b)})" if any(bits) else ""
    free = free_sibling(path)
    return (
        f"{path} already holds a run log{what}. A run log is written by one run and is not "
        "resumed or added to, so a restarted script or a notebook cell run again starts a new "
        f'one: give it a new directory (trace(..., run_dir="{free}") in a notebook or '
        f"script, --run-dir {free} on the command line), or delete {path} to write it again"
    )


def free_sibling(path: Path) -> Path:
    """``runs/exp1`` -> ``runs/exp2`` (the first number after it with no directory yet);
    ``runs/base`` -> ``runs/base-2``."""
    match = re.fullmatch(r"(.*?)(\d+)", path.name)
    stem, n = (match.group(1), int(match.group(2)) + 1) if match else (f"{path.name}-", 2)
    for k in range(n, n + 1000):
        candidate = path.with_name(f"{stem}{k}")
        if not candidate.exists():
            return candidate
    return path.with_name(f"{stem}{n}")
