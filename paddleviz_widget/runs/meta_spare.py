"""run.json's last word on a full disk. When a run log fails, run.json is rewritten "stopped"
with the error (log_writer.abandon); on a full disk that rewrite (a new file, renamed over
run.json) fails too, and run.json said "running" for as long as the training went on. So
the writer keeps a spare: a hidden file of run.json's size and some room, written while
there is space; overwriting bytes a file already holds takes no new space (on ext4, XFS,
tmpfs, NFS; a copy-on-write filesystem may still refuse it), and renaming it over run.json
replaces it whole, as every other write of run.json does."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

ROOM = 4096  # bytes past run.json's first text for what a stopped run adds (status, error)


def spare_path(run_json: Path) -> Path:
    return run_json.with_name(f".{run_json.name}.spare")


def make_spare(run_json: Path, meta: dict[str, Any]) -> None:
    """Reserve the space for ``meta`` (run.json's text) and ROOM more; OSError where there is
    no room for it (a disk that full holds no run log: the writer does not start)."""
    spare = spare_path(run_json)
    try:
        with open(spare, "wb") as f:
            f.write(b" " * (len(json.dumps(meta, indent=1).encode()) + ROOM))
    except OSError:
        with contextlib.suppress(OSError):
            spare.unlink(missing_ok=True)
        raise


def write_spare(run_json: Path, meta: dict[str, Any]) -> bool:
    """run.json replaced by ``meta`` written into the spare's own bytes (JSON then spaces,
    which json.loads ignores); False where it does not fit or cannot be written."""
    spare = spare_path(run_json)
    data = json.dumps(meta, indent=1).encode()
    try:
        size = spare.stat().st_size
        if len(data) > size:
            return False
        fd = os.open(spare, os.O_WRONLY)  # not O_TRUNC: its blocks are what is reused
        try:
            os.pwrite(fd, data + b" " * (size - len(data)), 0)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(spare, run_json)
    except OSError:
        return False
    return True


def drop_spare(run_json: Path) -> None:
    with contextlib.suppress(OSError):
        spare_path(run_json).unlink(missing_ok=True)
