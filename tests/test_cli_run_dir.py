"""``python -m paddleviz_widget train.py ARGS --run-dir RUN_DIR``: a script's whole run logged,
in a real subprocess; the script's output and status are its own."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ahead import ahead_fixture, commands

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
if sys.argv[2] == "raise":
    raise RuntimeError("the data loader died")
sys.exit(int(sys.argv[2]))
"""


# A script with options of its own named like ours (--run-dir, --every)
OWN = """\
import sys, paddle
from run_models import TinyMLP, train
print(sys.argv[1:])
model = TinyMLP()
train(model, paddle.optimizer.SGD(1e-3, parameters=model.parameters()), 2)
"""

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
CLI = [sys.executable, "-m", "paddleviz_widget"]
# Each test's commands, in order, in a directory of its own (tests/ahead.py); the longest first.
JOBS = {
    "logs": commands(
        {"train.py": SCRIPT},
        [*CLI, "train.py", "120", "0", "--run-dir", "runs/exp1", "--every", "50"],
        [*CLI, "--run-dir", "runs/exp1", "train.py", "3", "0"],
        env=ENV,
    ),
    "status": commands(
        {"train.py": SCRIPT}, [*CLI, "--run-dir", "r", "train.py", "5", "3"], env=ENV
    ),
    "unwritable": commands(
        {"train.py": SCRIPT, "notes": "a file"},
        [*CLI, "--run-dir", "notes/r", "train.py", "2", "0"],
        env=ENV,
    ),
    "own": commands(
        {"own.py": OWN},
        [*CLI, "--run-dir", "r", "own.py", "--run-dir", "ckpt", "--every", "7"],
        [*CLI, "-o", "g.json", "own.py", "--run-dir", "ckpt"],
        env=ENV,
    ),
    # A file-size limit (as a full disk): the log stops mid-run, the training goes on
    "full": commands(
        {"train.py": SCRIPT},
        [
            "sh",
            "-c",
            f"ulimit -f 24 && exec {sys.executable} -m paddleviz_widget --run-dir r train.py 400 0",
        ],
        env=ENV,
    ),  # fmt: skip
    "raises": commands(
        {"train.py": SCRIPT}, [*CLI, "--run-dir", "r", "train.py", "4", "raise"], env=ENV
    ),
}
USES = {
    "test_run_dir_logs_the_scripts_run": "logs",
    "test_run_dir_keeps_the_scripts_exit_status": "status",
    "test_a_script_that_raises_leaves_a_stopped_run_saying_why": "raises",
    "test_a_scripts_own_run_dir_option_is_the_scripts": "own",
    "test_a_run_dir_that_cannot_be_made_is_refused_before_the_script_runs": "unwritable",
    "test_the_closing_line_counts_the_steps_the_log_holds": "full",
}


ahead = ahead_fixture("run_dir", JOBS, USES)


def test_run_dir_logs_the_scripts_run(ahead):
    tmp_path, (done, again) = ahead("logs")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "trained ['120', '0']\n"
    run = open_run(tmp_path / "runs" / "exp1")
    assert run.meta["status"] == "finished" and run.meta["every"] == 50
    assert run.steps.tolist() == list(range(120))
    assert run.captured_steps == [0, 50, 100]
    assert [p.name for p in run.params][:2] == ["fc1.weight", "fc1.bias"]
    assert again.returncode == 1 and "already holds a run log" in again.stderr


def test_run_dir_keeps_the_scripts_exit_status(ahead):
    tmp_path, (done,) = ahead("status")
    assert done.returncode == 3
    run = open_run(tmp_path / "r")
    assert run.steps.tolist() == list(range(5))
    assert (run.meta["status"], run.meta["error"]) == ("stopped", "SystemExit: 3")


def test_a_script_that_raises_leaves_a_stopped_run_saying_why(ahead):
    """The script's exception is caught (and printed) by the CLI, not by the with block: the
    run log still says the run stopped, and why (it said "finished")."""
    tmp_path, (done,) = ahead("raises")
    assert done.returncode == 1 and "RuntimeError: the data loader died" in done.stderr
    run = open_run(tmp_path / "r")
    assert run.steps.tolist() == list(range(4))
    assert run.meta["status"] == "stopped"
    assert run.meta["error"] == "RuntimeError: the data loader died"


def test_a_run_dir_that_cannot_be_made_is_refused_before_the_script_runs(ahead):
    """It ran the whole script, then said at its first step that the log stopped."""
    tmp_path, (done,) = ahead("unwritable")
    assert done.returncode == 1 and done.stdout == ""
    assert f"cannot make the run log {tmp_path / 'notes' / 'r'}" in done.stderr


def test_a_scripts_own_run_dir_option_is_the_scripts(ahead):
    """Our options before the script: the script's own --run-dir/--every went to us (its
    log written to ckpt, the script run without its arguments); with -o before the script, its
    --run-dir turned the graph mode into the watch mode ("no such script: -o")."""
    tmp_path, (watched, graph) = ahead("own")
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout == "['--run-dir', 'ckpt', '--every', '7']\n"
    assert open_run(tmp_path / "r").steps.tolist() == [0, 1] and not (tmp_path / "ckpt").exists()
    assert graph.returncode == 0, graph.stderr
    assert graph.stdout == "['--run-dir', 'ckpt']\n" and (tmp_path / "g.json").is_file()


def test_the_closing_line_counts_the_steps_the_log_holds(ahead):
    """A log that failed mid-step (EFBIG) holds that step's tail line: the closing line said
    one step fewer than the log read back."""
    tmp_path, (done,) = ahead("full")
    assert done.returncode == 0 and done.stdout == "trained ['400', '0']\n", done.stderr
    assert "a file reached the largest size allowed (ulimit -f)" in done.stderr
    run = open_run(tmp_path / "r")
    assert run.meta["status"] == "stopped" and 0 < len(run.steps) < 400
    assert run.steps.tolist() == list(range(len(run.steps)))
    assert f"run log of {len(run.steps)} steps in " in done.stderr.splitlines()[-1]
