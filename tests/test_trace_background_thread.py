"""Training in a thread behind the notebook, watched (``trace(model, run_dir=...)`` entered in
that thread), while the notebook's own thread runs backward calls of its own (another
model, a quick check). Before, Paddle's backward entry points, patched process-wide by the
trace, recorded every one of the notebook's backward calls as a step of the run: a run of 6
training steps logged 12, the extra steps' rows holding the training model's gradients as they
happened to be. Now a block entered in another thread passes the main thread's backward calls
through; those of any other thread, one the block started (`t.start(); t.join()` inside it)
or a pool's worker, are still the block's (before, the end of the first steps, which puts back
the SIGINT handler, raised ValueError there: signal.signal works in the main thread only; the
run logged no step). A real process per case (threads and Paddle's patches are process-wide)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from paddle_versions import our_lines

HERE = Path(__file__).resolve().parent

COMMON = """\
import json, sys, threading, zlib  # zlib before paddle: Paddle 2.6 (README)
import paddle, paddle.nn.functional as F
from paddleviz_widget import open_run, trace
from run_models import TinyMLP, batch

paddle.seed(0)
model = TinyMLP()
opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
STEPS = 6
flags = paddle.get_flags(["FLAGS_call_stack_level"])
backward = paddle.Tensor.backward

def step(i):
    x, y = batch(i)
    F.mse_loss(model(x), y).backward()
    opt.step()
    opt.clear_grad()
"""

# The training thread enters the watch; after each of its steps the main thread (the
# notebook) runs a backward of its own while the block is still active, then lets it go on.
BEHIND = """
turn, back = threading.Event(), threading.Event()
other = paddle.nn.Linear(3, 2)

def training():
    with trace(model, stats=True, every=2, run_dir="run"):
        for i in range(STEPS):
            step(i)
            turn.set()
            back.wait(60)
            back.clear()

t = threading.Thread(target=training)
t.start()
for _ in range(STEPS):
    turn.wait(60)
    turn.clear()
    other(paddle.randn([2, 3])).sum().backward()
    back.set()
t.join()
"""

# The block itself starts the thread that trains: its steps are the run's.
INSIDE = """
with trace(model, stats=True, every=2, run_dir="run"):
    t = threading.Thread(target=lambda: [step(i) for i in range(STEPS)])
    t.start()
    t.join()
"""

# A worker that was running before the block (a pool's, kept from one cell to the next, as
# asyncio.to_thread's is) trains inside it: its steps are the run's.
POOL = """
from concurrent.futures import ThreadPoolExecutor
pool = ThreadPoolExecutor(1)
pool.submit(print, "warm").result()  # its thread starts here, before the block
with trace(model, stats=True, every=2, run_dir="run"):
    pool.submit(lambda: [step(i) for i in range(STEPS)]).result()
"""

# Entered in the main thread, left in another (a hand-driven __enter__/__exit__): before, the
# exit raised ValueError (signal.signal outside the main thread). The gate's handler stays,
# passing a Ctrl-C on, as put_back False says; Paddle's entry points are put back.
CROSSED = """
block = trace(model, stats=True, every=2, run_dir="run")
block.__enter__()
for i in range(STEPS):
    step(i)
errors = []
def leave():
    try:
        block.__exit__(None, None, None)
    except Exception as error:
        errors.append(repr(error))
t = threading.Thread(target=leave)
t.start()
t.join()
print("ERRORS", errors, "PATCHES", paddle.Tensor.backward is backward)
"""

# A Ctrl-C while the block's training thread records a step (sent from a gradient hook of the
# user's, which runs inside the step): Python raises it in the main thread, which waits for it.
# Before, the step's Ctrl-C gate held it and then raised it in the training thread, which died;
# the main thread was never interrupted.
CTRL_C = """
import os, signal, time
said = []

def hook(grad):
    if not said:
        said.append("sent")
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)  # the main thread takes the signal meanwhile

def training():
    for i in range(STEPS):
        if i == 3:
            model.fc1.weight.register_hook(hook)
        try:
            step(i)
        except KeyboardInterrupt:
            said.append("in the training thread")

with trace(model, stats=True, every=2, run_dir="run"):
    t = threading.Thread(target=training)
    t.start()
    while t.is_alive():  # (a Ctrl-C inside Thread.join can leave it thinking t ended)
        try:
            time.sleep(0.05)
        except KeyboardInterrupt:
            said.append("in the main thread")
    t.join()
print("CTRL-C", said)
"""

REPORT = """
import signal
run = open_run("run")
put_back = (signal.getsignal(signal.SIGINT) is signal.default_int_handler
            and paddle.get_flags(["FLAGS_call_stack_level"]) == flags)
print("RUN", json.dumps({"steps": [int(s) for s in run.steps], "status": run.meta["status"],
                         "put_back": put_back}))
"""


def _run(tmp_path: Path, body: str) -> dict:
    (tmp_path / "script.py").write_text(COMMON + body + REPORT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "script.py"], cwd=tmp_path, capture_output=True,
        text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert not our_lines(done.stderr), done.stderr[-3000:]
    if "CTRL-C" in done.stdout:
        assert "CTRL-C ['sent', 'in the main thread']" in done.stdout
    if "ERRORS" in done.stdout:
        assert "ERRORS [] PATCHES True" in done.stdout
    return json.loads(done.stdout.split("RUN ", 1)[1])


# Every training step logged, the run finished, the SIGINT handler and Paddle's flag put back.
WHOLE = {"steps": list(range(6)), "status": "finished", "put_back": True}


def test_the_notebooks_backward_calls_are_not_steps_of_a_run_training_behind_it(tmp_path):
    assert _run(tmp_path, BEHIND) == WHOLE


def test_a_thread_the_block_started_trains_the_run(tmp_path):
    assert _run(tmp_path, INSIDE) == WHOLE


def test_a_pool_thread_started_before_the_block_trains_the_run(tmp_path):
    assert _run(tmp_path, POOL) == WHOLE


def test_a_block_left_in_another_thread_ends_the_run_without_an_error(tmp_path):
    said = _run(tmp_path, CROSSED)
    assert said == {**WHOLE, "put_back": False}


def test_a_ctrl_c_during_a_training_threads_step_is_raised_in_the_main_thread(tmp_path):
    assert _run(tmp_path, CTRL_C) == WHOLE
