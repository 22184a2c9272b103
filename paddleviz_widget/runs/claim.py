"""A run dir claimed by its writer: the first run.json, made only where there is none, and
let go of again when the log cannot start after all (a full disk)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from pathlib import Path
from typing import Any

from . import format as fmt
from .errors import RunLogError
from .meta_spare import drop_spare
from .write_failure import failure_words


def cannot_start(path: Path, error: OSError) -> str:
    return (f"cannot start the run log {path}: {failure_words(error)}: give run_dir a folder "
            "you can write to, with space")  # fmt: skip


def claim(path: Path, meta: dict[str, Any]) -> None:
    """run.json written where there is none: of two processes given the same run dir at once
    (a command started twice), one writes and the other is refused. An exists() check alone
    let both write, their parts and captures mixed in one log. A hard link is atomic and
    refused over an existing file, NFS included. RunLogError for either refusal: another's
    log, or no space for run.json (a raw OSError reached the user's `with trace(...)`)."""
    target = path / fmt.META
    tmp = target.with_name(f".{fmt.META}.{socket.gethostname()}.{os.getpid()}.claim")
    data = json.dumps(meta, indent=1).encode()
    made = False
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise
        except OSError:  # a filesystem without hard links: create it exclusively
            with open(target, "xb") as f:
                made = True
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
    except FileExistsError:
        raise RunLogError(
            f"{path} already holds a run log: another process started one there at "
            "the same time; give each run its own directory (trace(run_dir=) or --run-dir)"
        ) from None
    except OSError as exc:
        if made:  # (ours, cut short: no run of anyone's)
            target.unlink(missing_ok=True)
        raise RunLogError(cannot_start(path, exc)) from None
    finally:
        tmp.unlink(missing_ok=True)


def unclaim(path: Path) -> None:
    """What claim() and the writer's start made, removed: the run dir is free for a new try."""
    for name in (fmt.TAIL, fmt.ANOMALIES, fmt.META):
        with contextlib.suppress(OSError):
            (path / name).unlink(missing_ok=True)
    drop_spare(path / fmt.META)
