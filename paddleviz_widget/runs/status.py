"""A run's status as the reader sees it: "running" only while its writer is alive."""

from __future__ import annotations

import os
import socket
from typing import Any


def effective_status(meta: dict[str, Any]) -> str:
    """ "running" in run.json, but the writing process is gone from this host: "stopped"
    (SIGKILL, a crash). On another host it cannot be told: "running"."""
    status = str(meta.get("status", "running"))
    if status != "running":
        return status
    pid, host = meta.get("pid"), meta.get("host")
    if not isinstance(pid, int) or host != socket.gethostname():
        return status
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "stopped"
    except PermissionError:
        pass  # someone else's live process
    return status
