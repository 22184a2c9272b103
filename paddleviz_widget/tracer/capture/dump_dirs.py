"""The temporary directories Paddle's backward dump is written to (backward_capture.py), and
those a killed process left behind.

Each full capture makes one ``paddleviz-dump-*`` directory and removes it once the dump is
read; a process killed during that backward (SIGKILL, OOM, a test's timeout) left it in the
temporary directory for good (26 empty ones after a day of tests). So each is held under an
exclusive flock(2) on its own descriptor from its making to its removal (the kernel lets go
of it when the process dies, however it dies), and the first one a process makes sweeps the
temporary directory of the ones no process holds. Only what is certainly abandoned goes: our
prefix, a directory (not a link) of this user, unlocked, and untouched for an hour (a dump
directory of an older version is never locked, but lives one backward)."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time

PREFIX = "paddleviz-dump-"
STALE_AFTER = 3600.0  # seconds untouched before an unlocked one is taken as abandoned
_held: dict[str, int] = {}  # path -> the descriptor holding its lock
_swept = False


def make() -> str:
    """A new dump directory, locked; OSError where none can be made."""
    global _swept
    if not _swept:
        _swept = True
        with contextlib.suppress(OSError, ImportError):  # (no fcntl: not POSIX)
            sweep(tempfile.gettempdir())
    path = tempfile.mkdtemp(prefix=PREFIX)
    # (no flock, e.g. some network filesystems, or no fcntl: unlocked, never swept young)
    with contextlib.suppress(OSError, ImportError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            _lock(fd)
        except OSError:
            os.close(fd)
            raise
        _held[path] = fd
    return path


def remove(path: str) -> None:
    """The dump directory gone, then its lock released."""
    shutil.rmtree(path, ignore_errors=True)
    fd = _held.pop(path, None)
    if fd is not None:
        os.close(fd)


def sweep(folder: str, now: float | None = None) -> list[str]:
    """Remove the dump directories in ``folder`` that no live process holds; the removed."""
    import fcntl  # (POSIX; elsewhere make() skips the sweep)

    now = time.time() if now is None else now
    removed = []
    with os.scandir(folder) as entries:
        candidates = [e.path for e in entries if e.name.startswith(PREFIX)]
    for path in candidates:
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            if now - info.st_mtime < STALE_AFTER or path in _held:
                continue
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: a live process's
        except OSError:
            os.close(fd)
            continue
        try:  # ours now: no process of this version can take it again (a new one has its own)
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


def _lock(fd: int) -> None:
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
