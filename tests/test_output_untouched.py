"""Do no harm to the user's output: a script's fd 1 and fd 2 bytes are the same with and without
paddleviz_widget (trace(), ``python -m paddleviz_widget.run``, the CLI), on to_static (full
graph and SOT), recompute, a PyLayer and paddleformers' Llama, with the user's own prints from
inside the backward (a PyLayer's backward, a tensor hook) arriving, in order.

Without the program-node silencing, a to_static backward under trace() printed Paddle's PIR
program (~60 lines) to stdout and ~100 lines of scope dumps to stderr (issue 23).
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from paddle_versions import requires_paddle_33, requires_paddleformers

SCRIPT = Path(__file__).with_name("output_scenarios.py")
ROOT = SCRIPT.parent.parent
# What differs between two runs of the same code: glog's time and thread id, the logging
# timestamps of paddleformers.
_GLOG = re.compile(rb"^([IWEF])\d{4}(?:\d{4})? [\d:.]+ +\d+ ", re.M)
_STAMP = re.compile(rb"\[\d{4}-\d\d-\d\d [\d:,]+\]")
# Paddle logs each thread of its pools (host tasks, the interpreter's garbage collector) as it
# starts one, and a loaded machine (the suite's other worker) can make it start one more, or one
# fewer before the process ends, in either run: lines of Paddle's thread timing, not ours.
_THREAD_NAMED = re.compile(
    rb"^I (?:os_info\.cc:\d+\] SetCurrentThreadName \w+_thread_\d+"
    rb"|nonblocking_threadpool\.h:\d+\] \w+_thread_\d+ started *)\n",
    re.M,
)


def _run(*args: str) -> tuple[int, bytes, bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GLOG_v", None)
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, env=env, timeout=600, check=False
    )
    stderr = _THREAD_NAMED.sub(b"", _GLOG.sub(rb"\1 ", done.stderr))
    return done.returncode, done.stdout, _STAMP.sub(b"[T]", stderr)


def _same(got: tuple[int, bytes, bytes], plain: tuple[int, bytes, bytes]) -> None:
    """``got`` == ``plain``, or a failure that shows the lines that differ, stream by stream."""
    if got == plain:
        return
    report = [f"exit code {got[0]} (plain {plain[0]})"]
    for name, a, b in (("stdout", plain[1], got[1]), ("stderr", plain[2], got[2])):
        ours, theirs = b.decode(errors="replace"), a.decode(errors="replace")
        lines = difflib.unified_diff(
            ours.splitlines(), theirs.splitlines(), "with paddleviz_widget", "plain", lineterm=""
        )
        report += [f"{name}:", *list(lines)[:60]]
    raise AssertionError("\n".join(report))


@functools.cache
def _plain(scenario: str) -> tuple[int, bytes, bytes]:
    # Run once per scenario and compared with each way of running it under paddleviz_widget
    # (the bytes of two plain runs are the same: what differs is normalised by _run).
    return _run(str(SCRIPT), scenario, "plain")


def _check_user_lines(out: bytes, err: bytes) -> None:
    """The user's own lines are all there, in order, on their own stream."""
    for stream, prefixes in ((out, (b"print", b"fd1")), (err, (b"eprint", b"fd2"))):
        for prefix in prefixes:
            lines = [ln for ln in stream.splitlines() if ln.startswith(prefix + b" ")]
            assert lines[0].endswith(b"before") and lines[-1].endswith(b"after")
            assert [ln for ln in lines if b"step" in ln] == [prefix + b" step 0",
                                                             prefix + b" step 1"]  # fmt: skip


SCENARIOS = ["static_full", "static_sot", "recompute", "pylayer"]


@requires_paddle_33
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_trace_prints_nothing_of_its_own(scenario: str) -> None:
    plain = _plain(scenario)
    traced = _run(str(SCRIPT), scenario, "trace")
    assert plain[0] == 0, plain[2].decode()[-2000:]
    _same(traced, plain)
    _check_user_lines(traced[1], traced[2])


@requires_paddle_33
@pytest.mark.parametrize("scenario", ["static_full", "static_sot"])
def test_build_graph_replay_prints_nothing_of_its_own(scenario: str) -> None:
    _same(_run(str(SCRIPT), scenario, "replay"), _plain(scenario))


@requires_paddle_33
def test_a_forward_outside_trace_prints_nothing_either() -> None:
    """Its program cannot be quieted: that backward is traced without the log."""
    _same(_run(str(SCRIPT), "static_full", "late"), _plain("static_full"))


@requires_paddle_33
@requires_paddleformers
def test_trace_prints_nothing_on_paddleformers_llama() -> None:
    plain = _plain("llama")
    assert plain[0] == 0, plain[2].decode()[-2000:]
    _same(_run(str(SCRIPT), "llama", "trace"), plain)


@requires_paddle_33
@pytest.mark.parametrize("scenario", ["static_full", "static_sot"])
def test_run_module_and_cli_print_nothing_of_their_own(scenario: str, tmp_path: Path) -> None:
    plain = _plain(scenario)
    ran = _run("-m", "paddleviz_widget.run", str(SCRIPT), scenario, "plain")
    _same(ran, plain)
    out = tmp_path / "graph.json"
    code, stdout, stderr = _run("-m", "paddleviz_widget", "-o", str(out), str(SCRIPT),
                                scenario, "plain")  # fmt: skip
    assert (code, stdout) == plain[:2]
    # The CLI's one documented line, at the end; nothing else.
    assert stderr == plain[2] + f"paddleviz_widget: wrote {out} (backward call 2 of 2)\n".encode()
    assert out.is_file()
