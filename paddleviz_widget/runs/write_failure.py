"""The words for a run log that stopped because a file of it could not be written: what
happened to the disk, said once, rather than Python's and Arrow's errno texts ("OSError:
[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device")."""

from __future__ import annotations

import errno
import os
import re
import traceback

from .errors import RunLogError

_DISK = {
    errno.ENOSPC: "the disk is full (no space left on device)",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "a file reached the largest size allowed (ulimit -f)",
    errno.EROFS: "its filesystem became read-only",
    errno.EACCES: "it may no longer be written (permission denied)",
    errno.EPERM: "it may no longer be written (operation not permitted)",
    errno.ENOENT: "its directory is gone (deleted or moved)",
    errno.EIO: "the disk reported an input/output error",
}


def failure_words(error: BaseException) -> str:
    """One line saying why the run log failed; a disk's error in words, naming the file."""
    if isinstance(error, RunLogError):
        return str(error)
    code = error.errno if isinstance(error, OSError) else None
    words = _DISK.get(code) if code is not None else None
    if words is None:
        return traceback.format_exception_only(type(error), error)[-1].strip()
    name = getattr(error, "filename", None)
    if not isinstance(name, str):
        return words
    # the file as the log names it, not its temporary name (.capture-...zst.123.tmp)
    base = re.sub(r"^\.(.+?)(\.\d+)?\.tmp$", r"\1", os.path.basename(name))
    return f"{words} (writing {base})"
