"""Capture what C++ writes to file descriptor 2 (glog/VLOG) while a block runs.

Paddle's VLOG goes straight to fd 2, below Python's ``sys.stderr``, so it can only be caught by
pointing fd 2 somewhere else. A temporary file is used rather than a pipe: a pipe nobody reads
while the body runs fills up (64 KiB) and the logging thread blocks forever.

On exit (exceptions included) fd 2 is put back exactly, and everything captured that is not part
of an INFO glog record (VLOG writes INFO) is written back to the original stderr, so the user's
own stderr output, and glog warnings and errors, are delayed until the block ends but never lost.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from ..parse.log_records import GlogRecord, join_records, separate_log

STDERR_FD = 2


@dataclass
class CapturedStderr:
    """Filled in when the ``capture_stderr`` block exits."""

    text: str = ""  # the glog records (the C++ log)
    records: tuple[GlogRecord, ...] = ()  # the same, already split (parse_glog_records)
    passed_through: str = ""  # what was written back to stderr: non-glog text, W/E/F records
    # Ends the capture at once, everything captured so far written back as it was: for a block
    # that finds it gets no log of ours after all (VlogUnavailableError), so what Paddle
    # writes during it is the user's, INFO records included.
    release: Callable[[], None] = field(default=lambda: None, repr=False)
    # The file it went to filled its disk (TMPDIR full): what Paddle wrote after is lost
    cut: bool = False


def _readable_text(text: str) -> str:
    """Undo surrogateescape: bytes that were not UTF-8 become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _readable(record: GlogRecord) -> GlogRecord:
    return GlogRecord(_readable_text(record.prefix), _readable_text(record.message))


def _flush_c_stdio() -> None:
    """fflush(NULL): push any C-level buffered output out before fd 2 changes target."""
    with contextlib.suppress(OSError, AttributeError, TypeError):  # no C runtime by that name
        ctypes.CDLL(None).fflush(None)


def _flush_python_stderr() -> None:
    # None (pythonw), closed (ValueError) or broken (OSError): nothing to flush into fd 2.
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stderr.flush()


def _stderr_is_fd2() -> bool:
    """Whether writing to fd 2 is what ``sys.stderr`` does (False e.g. in a Jupyter kernel)."""
    try:
        return sys.stderr is not None and sys.stderr.fileno() == STDERR_FD
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return False


def _write_through(data: bytes) -> None:
    if not data:
        return
    if _stderr_is_fd2():
        view = memoryview(data)
        with contextlib.suppress(OSError):  # fd 2 closed by the body: nowhere to write
            while view:
                view = view[os.write(STDERR_FD, view) :]
        return
    with contextlib.suppress(AttributeError, ValueError, OSError):  # nowhere left to report to
        sys.stderr.write(data.decode("utf-8", errors="replace"))
        sys.stderr.flush()


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _collect(data: bytes, result: CapturedStderr, passed: str) -> None:
    """Split what was captured; write the non-log part back to stderr byte for byte."""
    try:
        raw, exact = data.decode("utf-8"), True
    except UnicodeDecodeError:  # surrogateescape keeps the odd bytes for the write-back
        raw, exact = data.decode("utf-8", errors="surrogateescape"), False
    # Warnings and errors would have reached the user without the capture: they still do.
    records, other = separate_log(raw, also_other=passed)
    _write_through(other.encode("utf-8", "surrogateescape") if not exact else other.encode())
    if not exact:
        records = [_readable(r) for r in records]
        other = _readable_text(other)
    result.records = tuple(records)
    result.text = join_records(records)
    result.passed_through = other


def _sink() -> BinaryIO:
    """A file for fd 2 to go to: a temporary file or, where no temporary directory is writable
    (TMPDIR, /tmp and the working directory read-only), an anonymous one in memory (Linux), so
    a backward inside trace() does not fail for want of a place to put Paddle's log."""
    try:
        return tempfile.TemporaryFile()
    except OSError:
        if not hasattr(os, "memfd_create"):
            raise
        return os.fdopen(os.memfd_create("paddleviz-stderr"), "w+b")


def _disk_full(fd: int) -> bool:
    """Whether the filesystem of ``fd`` has (almost) no space left: glog's writes to a file
    on it fail without a word, so the capture holds only the log's beginning. (An anonymous
    file in memory reports no blocks at all: never full.)"""
    try:
        st = os.fstatvfs(fd)
    except OSError:
        return False
    free = st.f_bfree if os.geteuid() == 0 else st.f_bavail  # (root's reserve is root's)
    return st.f_blocks > 0 and free * st.f_frsize < 65536


@contextlib.contextmanager
def capture_stderr(
    *, pass_warnings: bool = True, passed: str | None = None
) -> Iterator[CapturedStderr]:
    """Redirect fd 2 into a temporary file for the block; yield where the log will be put.

    ``result.text`` holds the glog records once the block has exited. ``pass_warnings=False``
    keeps Paddle's W/E/F log lines too: for backward passes the user did not ask for.
    ``passed``: the glog severities written back ("WEF" by default), instead.
    """
    if passed is None:
        passed = "WEF" if pass_warnings else ""
    result = CapturedStderr()
    _flush_python_stderr()
    _flush_c_stdio()
    saved = _saved_stderr()
    try:
        with _sink() as sink:
            released = False

            def put_back(whole: bool) -> None:
                nonlocal released
                if released:
                    return
                released = True
                _flush_python_stderr()
                _flush_c_stdio()
                if saved is None:  # fd 2 was closed (`2>&-`): closed again
                    os.close(STDERR_FD)
                else:
                    os.dup2(saved[0], STDERR_FD, inheritable=saved[1])
                data = _read_all(sink.fileno())
                if whole:
                    _write_through(data)
                    return
                if _disk_full(sink.fileno()):  # Paddle's writes into it failed, unseen
                    result.cut = True
                    # its last line, cut off, is no one's output ("I1130 15:52:31.0199 181")
                    data = data[: data.rfind(b"\n") + 1]
                _collect(data, result, passed)

            result.release = lambda: put_back(whole=True)
            os.dup2(sink.fileno(), STDERR_FD)
            try:
                yield result
            finally:
                put_back(whole=False)
    finally:
        if saved is not None:
            os.close(saved[0])


def _saved_stderr() -> tuple[int, bool] | None:
    """A copy of fd 2 and whether it was inheritable, to put it back; None when fd 2 is not
    open (a process started with `2>&-`): then the block has it pointed at the sink and
    closes it after, where os.dup(2) raised EBADF into the user's backward. fd 2 is held by
    /dev/null meanwhile, so that the sink, opened next, is not given fd 2 itself."""
    try:
        inheritable = os.get_inheritable(STDERR_FD)
    except OSError:
        placeholder = os.open(os.devnull, os.O_WRONLY)
        if placeholder != STDERR_FD:
            os.dup2(placeholder, STDERR_FD)
            os.close(placeholder)
        return None
    return os.dup(STDERR_FD), inheritable
