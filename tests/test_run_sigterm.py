"""SIGTERM to a watched training run (`kill PID`, a scheduler's stop): run.json says the run
stopped by it, in words, as a Ctrl-C's says "KeyboardInterrupt", and the process still dies
by the signal as it would have (runs/sigterm_end.py). Before, Paddle's C++ SIGTERM handler
ended the process with run.json "running".

Real processes: a training script (trace(..., run_dir=) in it, or run by
`python -m paddleviz_widget --run-dir`) killed by a real SIGTERM once it says it trained 4
steps. Oracles: the process's return code (-15: killed by SIGTERM), run.json read as JSON,
the steps read back, what the user's own handler printed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from paddleviz_widget import open_run

_TRAIN = """
import os, signal, sys, time, zlib  # zlib before paddle (Paddle 2.6 refuses trace() else)
import paddle
stop = []
{before}
model = paddle.nn.Linear(4, 2)
opt = paddle.optimizer.SGD(parameters=model.parameters())
{block}
    for i in range(3000):
        loss = model(paddle.randn([3, 4])).sum()
        loss.backward(); opt.step(); opt.clear_grad()
        if i == 3:
            print("ready", flush=True)
        if stop:
            break
        time.sleep(0.01)
print("after", {expected}, flush=True)
{after}
"""
_WATCHED = "from paddleviz_widget import trace\nwith trace(model, stats=True, run_dir=sys.argv[1]):"
_PLAIN = "if True:"  # (the CLI watches the script)


def _run(tmp_path, *, before="", after="", expected="True", cli=False, then_kill=False):
    """The script's return code, stdout, stderr and run.json, SIGTERM sent once it is ready
    (and once more once its block is over, with ``then_kill``)."""
    run_dir, script = tmp_path / "run", tmp_path / "train.py"
    text = _TRAIN.format(before=textwrap.dedent(before), after=textwrap.dedent(after),
                         block=_PLAIN if cli else _WATCHED, expected=expected)  # fmt: skip
    script.write_text(text)
    argv = (
        [sys.executable, "-m", "paddleviz_widget", "--run-dir", str(run_dir), str(script)]
        if cli
        else [sys.executable, str(script), str(run_dir)]
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=tmp_path)  # fmt: skip
    try:
        lines = []
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("after" if then_kill else "ready"):
                proc.send_signal(signal.SIGTERM)
                break
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    meta = json.loads((run_dir / "run.json").read_text())
    return proc.returncode, "".join(lines) + out, err, meta


def _steps(tmp_path) -> int:
    return len(open_run(tmp_path / "run").steps)


def test_a_script_killed_by_sigterm_says_so_and_dies_by_it(tmp_path):
    code, out, err, meta = _run(tmp_path)
    assert code == -signal.SIGTERM, err[-2000:]
    assert meta["status"] == "stopped" and meta["error"].startswith(
        "SIGTERM: the process was terminated"
    ), meta
    assert "ended" in meta
    assert "Termination signal" in out  # Paddle's own handler still says it (on stdout)
    assert _steps(tmp_path) >= 4


def test_the_cli_run_killed_by_sigterm_says_so_and_dies_by_it(tmp_path):
    code, _, err, meta = _run(tmp_path, cli=True)
    assert code == -signal.SIGTERM, err[-2000:]
    assert meta["status"] == "stopped" and meta["error"].startswith("SIGTERM"), meta
    assert _steps(tmp_path) >= 4


def test_the_default_action_is_kept(tmp_path):
    # SIG_DFL set by the script: killed by the signal, with no Paddle message
    code, out, err, meta = _run(tmp_path, before="signal.signal(signal.SIGTERM, signal.SIG_DFL)")
    assert code == -signal.SIGTERM, err[-2000:]
    assert meta["status"] == "stopped" and meta["error"].startswith("SIGTERM"), meta
    assert "Termination signal" not in out + err


def test_a_users_graceful_handler_still_stops_the_loop_and_the_run_finishes(tmp_path):
    before = """
    def graceful(signum, frame):
        print("graceful", signum, flush=True)
        stop.append(1)
    signal.signal(signal.SIGTERM, graceful)
    """
    expected = "signal.getsignal(signal.SIGTERM) is graceful"
    code, out, err, meta = _run(tmp_path, before=before, expected=expected)
    assert code == 0, err[-2000:]
    assert f"graceful {int(signal.SIGTERM)}" in out
    assert "after True" in out  # the user's handler is back in place after the block
    assert meta["status"] == "finished" and "error" not in meta, meta


def test_a_users_exiting_handler_exits_as_it_says_and_the_log_names_the_signal(tmp_path):
    before = """
    def leave(signum, frame):
        sys.exit(3)
    signal.signal(signal.SIGTERM, leave)
    """
    code, _, err, meta = _run(tmp_path, before=before)
    assert code == 3, err[-2000:]
    assert meta["status"] == "stopped", meta
    assert meta["error"].startswith("SIGTERM") and meta["error"].endswith("(SystemExit: 3)")


def test_after_the_block_sigterm_is_paddles_again_and_the_log_stays_finished(tmp_path):
    # one step, the block ends, then SIGTERM reaches Paddle's handler again. (Python shows
    # Paddle's C++ handler as None, and once ours is gone as SIG_DFL: there is no way to
    # give its table None back; the handler itself is Paddle's, put back by sigaction.)
    expected = "signal.getsignal(signal.SIGTERM) in (None, signal.SIG_DFL)"
    code, out, err, meta = _run(tmp_path, before="stop.append(1)", after="time.sleep(120)",
                                expected=expected, then_kill=True)  # fmt: skip
    assert code == -signal.SIGTERM, err[-2000:]
    assert "after True" in out
    assert "Termination signal" in out
    assert meta["status"] == "finished" and "error" not in meta, meta


def test_a_main_thread_held_in_a_c_call_still_dies_at_once(tmp_path):
    # A hung collective: the main thread inside one C call that does not return (here
    # libc's sleep, SIGTERM blocked in that thread so another takes it). Our Python handler
    # cannot run there; before it, Paddle's handler killed the process at once, and it still
    # dies within the watchdog's grace, run.json said.
    run_dir, script = tmp_path / "run", tmp_path / "train.py"
    script.write_text(_HELD)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, str(script), str(run_dir)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("held")
        time.sleep(0.5)  # inside the C call
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGTERM, err[-2000:]
    assert took < 20, f"the process outlived SIGTERM by {took:.1f} s (its C call: 60 s)"
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "stopped" and meta["error"].startswith("SIGTERM"), meta
    assert "Termination signal" in out  # Paddle's handler, as before


_HELD = """
import ctypes, signal, sys, zlib  # zlib before paddle (Paddle 2.6)
import paddle
from paddleviz_widget import trace
model = paddle.nn.Linear(4, 2)
with trace(model, stats=True, run_dir=sys.argv[1]):
    for i in range(3):
        model(paddle.randn([3, 4])).sum().backward()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    print("held", flush=True)
    ctypes.CDLL(None).sleep(60)
"""


def test_a_forked_childs_sigterm_leaves_the_parent_training(tmp_path):
    # A child forked inside the block (a DataLoader worker, an evaluation) is ended by
    # SIGTERM: the parent trains on and finishes; the child dies by the signal.
    run_dir, script = tmp_path / "run", tmp_path / "train.py"
    script.write_text(_FORKED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, str(script), str(run_dir)], capture_output=True,
                          text=True, env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"child {-signal.SIGTERM}" in done.stdout
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "finished" and "error" not in meta, meta
    assert _steps(tmp_path) == 40


_FORKED = """
import os, signal, sys, time, zlib  # zlib before paddle (Paddle 2.6)
import paddle
from paddleviz_widget import trace
model = paddle.nn.Linear(4, 2)
with trace(model, stats=True, run_dir=sys.argv[1]):
    for i in range(40):
        model(paddle.randn([3, 4])).sum().backward()
        if i == 2:
            child = os.fork()
            if child == 0:
                time.sleep(60)
                os._exit(0)
            time.sleep(0.3)
            os.kill(child, signal.SIGTERM)
            _, status = os.waitpid(child, 0)
            print("child", -os.WTERMSIG(status) if os.WIFSIGNALED(status) else status, flush=True)
        time.sleep(0.05)  # past the watchdog's grace
"""
