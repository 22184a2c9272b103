"""capture_stderr: C++ VLOG is captured, fd 2 comes back exactly, the user's stderr is kept."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import paddle
import paddle.nn as nn
import pytest
from paddle_versions import requires_vlog_switch

from paddleviz_widget.tracer.capture.stderr_capture import capture_stderr
from paddleviz_widget.tracer.capture.vlog import vlog_level
from paddleviz_widget.tracer.parse.log_parser import parse_backward_log, parse_glog_records
from paddleviz_widget.tracer.parse.log_records import GLOG_PREFIX

LIBC = ctypes.CDLL(None)


def fd2_identity() -> tuple[int, int, int, bool]:
    st = os.fstat(2)
    return st.st_dev, st.st_ino, fcntl.fcntl(2, fcntl.F_GETFL), os.get_inheritable(2)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@contextlib.contextmanager
def original_stderr() -> Iterator[IO[bytes]]:
    """Point fd 2, and a sys.stderr that really writes to fd 2, at a file we can read back.

    Done inside each test body: pytest re-points fd 2 and sys.stderr between fixture setup and
    the test call, so a fixture could not do it.
    """
    with tempfile.TemporaryFile() as target:
        saved_fd, saved_stream = os.dup(2), sys.stderr
        saved_stream.flush()
        os.dup2(target.fileno(), 2)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
        try:
            yield target
        finally:
            sys.stderr = saved_stream
            os.dup2(saved_fd, 2)
            os.close(saved_fd)


def written(target: IO[bytes]) -> bytes:
    sys.stderr.flush()
    target.seek(0)
    return target.read()


def small_loss() -> paddle.Tensor:
    paddle.seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Sigmoid(), nn.Linear(8, 2))
    return net(paddle.randn([3, 4])).sum()


def libc_write(text: bytes) -> None:
    LIBC.write(2, text, len(text))


@requires_vlog_switch
def test_backward_under_capture_gives_runs_and_keeps_the_log_off_stderr():
    loss = small_loss()
    with original_stderr() as target:
        with capture_stderr() as captured, vlog_level(6):
            loss.backward()
        leaked = written(target).decode(errors="replace").splitlines()
    log = parse_backward_log(captured.text)
    assert log.warnings == ()
    assert loss.grad_fn.name() in {run.node_name for run in log.runs}
    assert parse_glog_records(captured.records) == log
    assert not [line for line in leaked if GLOG_PREFIX.match(line)]


def test_fd2_is_restored_exactly_on_normal_exit():
    with original_stderr():
        before, fds = fd2_identity(), open_fds()
        with capture_stderr():
            assert os.fstat(2).st_ino != before[1]  # really redirected meanwhile
        assert fd2_identity() == before
        assert open_fds() == fds


def test_fd2_is_restored_exactly_when_the_body_raises():
    with original_stderr() as target:
        before, fds = fd2_identity(), open_fds()
        with pytest.raises(RuntimeError, match="boom"), capture_stderr() as captured:
            os.write(2, b"said before failing\n")
            raise RuntimeError("boom")
        assert fd2_identity() == before
        assert open_fds() == fds
        assert written(target) == b"said before failing\n"
    assert captured.passed_through == "said before failing\n"


def test_non_inheritable_fd2_stays_non_inheritable():
    with original_stderr():
        os.set_inheritable(2, False)
        before = fd2_identity()
        with capture_stderr():
            pass
        assert fd2_identity() == before


@requires_vlog_switch
def test_user_output_reaches_the_original_stderr_in_order():
    loss = small_loss()
    with original_stderr() as target:
        with capture_stderr() as captured:
            os.write(2, b"os.write before\n")
            libc_write(b"libc write before\n")
            with vlog_level(6):
                loss.backward()
                libc_write(b"libc write during VLOG\n")
            print("print to sys.stderr", file=sys.stderr)
            os.write(2, b"\xff\xfe not utf-8\n")
        received = written(target)
    assert received == (
        b"os.write before\nlibc write before\nlibc write during VLOG\n"
        b"print to sys.stderr\n\xff\xfe not utf-8\n"
    )
    assert "write" not in captured.text and parse_backward_log(captured.text).runs


def test_glog_warnings_still_reach_the_user_and_stay_in_the_log():
    warning = b"W1121 10:10:51.369462 12345 somewhere.cc:7] careful: {x}\n"
    with original_stderr() as target:
        with capture_stderr() as captured:
            os.write(2, b"I1121 10:10:51.369000 12345 somewhere.cc:6] just info\n")
            os.write(2, warning)
            os.write(2, b"user text\n")
        assert written(target) == warning + b"user text\n"
    assert captured.text.endswith(warning.decode())
    assert "just info" in captured.text and "user text" not in captured.text


@requires_vlog_switch
def test_passthrough_goes_to_sys_stderr_when_that_is_not_fd2():
    notebook = io.StringIO()  # like ipykernel's OutStream: no usable fd 2 behind it
    with original_stderr() as target:
        sys.stderr = notebook
        with capture_stderr() as captured, vlog_level(4):
            small_loss().backward()
            os.write(2, b"from C land\n")
        assert written(target) == b""
    assert notebook.getvalue() == "from C land\n"
    assert parse_backward_log(captured.text).runs


def test_more_output_than_a_pipe_holds_does_not_block():
    chunk = b"x" * 1023 + b"\n"
    with original_stderr() as target:
        with capture_stderr() as captured:
            for _ in range(1024):  # 1 MiB: a pipe nobody drains would block after 64 KiB
                os.write(2, chunk)
        assert written(target) == chunk * 1024
    assert captured.text == ""


@requires_vlog_switch
def test_nested_captures_each_restore_their_own_target():
    with original_stderr() as target:
        outer_fd2 = fd2_identity()
        with capture_stderr() as outer:
            inner_fd2 = fd2_identity()
            with capture_stderr() as inner, vlog_level(4):
                small_loss().backward()
                os.write(2, b"inner user text\n")
            assert fd2_identity() == inner_fd2
        assert fd2_identity() == outer_fd2
        assert written(target) == b"inner user text\n"
    assert parse_backward_log(inner.text).runs and outer.text == ""


KERNEL_CODE = r"""
import os, sys, paddle
from paddleviz_widget.tracer.capture.stderr_capture import capture_stderr
from paddleviz_widget.tracer.capture.vlog import vlog_level
from paddleviz_widget.tracer.parse.log_parser import parse_glog_records
x = paddle.randn([2, 3]); x.stop_gradient = False
loss = (x * x).sum()
before = os.fstat(2)
with capture_stderr() as captured, vlog_level(6):
    os.write(2, b"C-level text\n")
    loss.backward()
after = os.fstat(2)
log = parse_glog_records(captured.records)
print(len(log.runs), log.warnings, (before.st_dev, before.st_ino) == (after.st_dev, after.st_ino))
"""


def test_in_a_real_jupyter_kernel_fd2_text_reaches_the_notebook():
    """ipykernel replaces sys.stderr with an OutStream and watches fd 2 itself."""
    manager = pytest.importorskip("jupyter_client.manager")
    km, kc = manager.start_new_kernel(startup_timeout=90, cwd=str(Path(__file__).parents[1]))
    try:
        msg_id = kc.execute(KERNEL_CODE)
        streams: dict[str, str] = {"stdout": "", "stderr": ""}
        while True:
            msg = kc.get_iopub_msg(timeout=90)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                streams[msg["content"]["name"]] += msg["content"]["text"]
            assert msg["msg_type"] != "error", "\n".join(msg["content"]["traceback"])
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert streams["stdout"].strip() == "3 () True"
    assert "C-level text\n" in streams["stderr"]
    assert not GLOG_PREFIX.search(streams["stderr"])
