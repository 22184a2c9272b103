"""A run whose process was killed (SIGKILL: nothing of it runs, run.json stays "running"; a
SIGTERM is said in run.json since runs/sigterm_end.py): the reader on its host says
"stopped" (the pid is gone); on another host it cannot look for the pid, and says when the
run last wrote a step instead (RunLog.last_write, sent to the explorer, whose status line
words it: js/view/run_status.ts)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from paddleviz_widget import open_run
from paddleviz_widget.runs.view_data import run_description

REPO = Path(__file__).resolve().parent.parent

TRAIN = """\
import sys
from paddleviz_widget import trace  # above paddle: Paddle 2.6 (README, zlib)
import paddle
import paddle.nn.functional as F
model = paddle.nn.Linear(8, 1)
opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
with trace(model, stats=True, run_dir=sys.argv[1]):
    step = 0
    while True:  # until killed
        loss = F.mse_loss(model(paddle.randn([4, 8])), paddle.zeros([4, 1]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        print(step, flush=True)
        step += 1
"""


def killed_run(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(TRAIN)
    run_dir = tmp_path / "run"
    child = subprocess.Popen(
        [sys.executable, "train.py", str(run_dir)], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if int(line) >= 20:
                break
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode != 0
    return run_dir


def test_a_killed_run_is_stopped_here_and_says_how_long_it_is_silent_elsewhere(tmp_path):
    before = time.time()
    run_dir = killed_run(tmp_path)
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "running"  # no handler of ours, none of the process's ran
    run = open_run(run_dir)
    assert run.meta["status"] == "stopped" and len(run.steps) >= 21
    tail = (run_dir / "tail.jsonl").stat().st_mtime  # its last step's line
    assert run.last_write == tail and before < tail <= time.time()
    # Read on another host: the pid cannot be looked for; three hours later
    meta["host"] = "another-host"
    (run_dir / "run.json").write_text(json.dumps(meta))
    os.utime(run_dir / "tail.jsonl", (tail - 3 * 3600, tail - 3 * 3600))
    elsewhere = open_run(run_dir)
    assert elsewhere.meta["status"] == "running" and elsewhere.last_write == tail - 3 * 3600
    desc = run_description(elsewhere)
    assert desc["written"] == tail - 3 * 3600 and abs(desc["read_at"] - time.time()) < 60
