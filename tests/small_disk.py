"""A real small disk for a child process: ``on_small_disk(size, mount_at, argv)`` runs argv
with a tmpfs of ``size`` mounted at ``mount_at`` in a mount namespace of its own (as root
``unshare -m``, else in a user namespace ``unshare -Urm``): the mount goes with the process,
nothing to unmount or clean. Skips the test, saying why, where neither is allowed (a
container without CAP_SYS_ADMIN that forbids user namespaces)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest


@cache
def _namespace() -> tuple[str, ...] | None:
    if shutil.which("unshare") is None:
        return None
    for command in (("unshare", "-m", "--propagation", "private"), ("unshare", "-Urm")):
        probe = "mount -t tmpfs -o size=64k tmpfs /mnt"  # (in the namespace only)
        done = subprocess.run([*command, "sh", "-c", probe], capture_output=True, timeout=30)
        if done.returncode == 0:
            return command
    return None


def on_small_disk(
    size: str, mount_at: Path, argv: list[str], **kw
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    command = _namespace()
    if command is None:
        pytest.skip("no tmpfs can be mounted here (unshare -m and unshare -Urm refused)")
    mount_at.mkdir(parents=True, exist_ok=True)
    script = (f"mount -t tmpfs -o size={size} tmpfs {shlex.quote(str(mount_at))} && exec "
              + shlex.join(argv))  # fmt: skip
    return subprocess.run([*command, "sh", "-c", script], capture_output=True, text=True, **kw)
