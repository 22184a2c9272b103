"""``python -m paddleviz_widget train.py ARGS --run-dir RUN_DIR``: a script's whole run logged,
in a real subprocess; the script's output and status are its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from paddleviz_widget import open_run

HERE = Path(__file__).resolve().parent

SCRIPT = """\
import sys, paddle
from run_models import TinyMLP, train
paddle.seed(0)
model = TinyMLP()
opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
train(model, opt, int(sys.argv[1]))
print("trained", sys.argv[1:])
sys.exit(int(sys.argv[2]))
"""


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    return subprocess.run([sys.executable, "-m", "paddleviz_widget", *args], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=300)  # fmt: skip


def test_run_dir_logs_the_scripts_run(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    done = _cli(tmp_path, "train.py", "120", "0", "--run-dir", "runs/exp1", "--every", "50")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "trained ['120', '0']\n"
    run = open_run(tmp_path / "runs" / "exp1")
    assert run.meta["status"] == "finished" and run.meta["every"] == 50
    assert run.steps.tolist() == list(range(120))
    assert run.captured_steps == [0, 50, 100]
    assert [p.name for p in run.params][:2] == ["fc1.weight", "fc1.bias"]
    again = _cli(tmp_path, "--run-dir", "runs/exp1", "train.py", "3", "0")
    assert again.returncode == 1 and "already holds a run log" in again.stderr


def test_run_dir_keeps_the_scripts_exit_status(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    done = _cli(tmp_path, "--run-dir", "r", "train.py", "5", "3")
    assert done.returncode == 3
    assert open_run(tmp_path / "r").steps.tolist() == list(range(5))
