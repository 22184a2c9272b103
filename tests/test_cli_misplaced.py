"""An -o the command line did not take says why: `train.py -o g.html --bogus` (our options at
the end, something that is not ours after them) said "pass the file to write with -o", to a
user who had passed one; `train.py --run-dir` (no directory after it) said the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TRAIN = """\
import sys
import paddle
steps = int(sys.argv[sys.argv.index("--steps") + 1])
model = paddle.nn.Linear(3, 1)
for _ in range(steps):
    model(paddle.randn([2, 3])).mean().backward()
    model.clear_gradients()
print("steps", steps)
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "train.py"
    script.write_text("raise SystemExit('the script must not run')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "follows"),
    [
        (["train.py", "-o", "g.html", "--bogus"], "--bogus"),
        (["train.py", "-o", "g.html", "--step", "two"], "--step two"),
        (["train.py", "--output=g.html", "--epochs", "2"], "--epochs 2"),
    ],
)
def test_an_o_among_the_scripts_arguments_is_said(tmp_path, args, follows):
    done = _run(tmp_path, *args)
    assert done.returncode == 2
    assert f"was taken as the script's own argument, as {follows!r} follows it" in done.stderr
    assert "-o graph.html train.py ARGS" in done.stderr  # the fix
    assert "pass the file to write with -o" not in done.stderr
    assert "must not run" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_a_run_dir_among_the_scripts_arguments_is_said(tmp_path):
    done = _run(tmp_path, "train.py", "--run-dir", "runs/exp1", "--bogus")
    assert done.returncode == 2
    assert (
        "--run-dir was taken as the script's own argument, as '--bogus' follows it" in done.stderr
    )
    assert "--run-dir runs/exp1 train.py ARGS" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_the_equals_form_at_the_end_watches_the_run(tmp_path):
    # `train.py ARGS --run-dir=DIR --every=2` went to the graph mode ("pass the file to write
    # with -o"): only "--run-dir DIR" was looked for at the end
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    (tmp_path / "train.py").write_text(TRAIN)
    done = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "train.py", "--steps", "5",
         "--run-dir=runs/exp1", "--every=2"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "steps 5\n"  # the script got its own argument, and only it
    meta = json.loads((tmp_path / "runs" / "exp1" / "run.json").read_text())
    assert meta["every"] == 2 and meta["status"] == "finished"
    assert "run log of 5 steps" in done.stderr


def test_a_run_dir_without_its_directory_is_said(tmp_path):
    done = _run(tmp_path, "train.py", "--run-dir")
    assert done.returncode == 2
    assert "--run-dir takes the run log's directory" in done.stderr


def test_no_o_at_all_still_asks_for_one(tmp_path):
    done = _run(tmp_path, "train.py", "--epochs", "1")
    assert done.returncode == 2
    assert "pass the file to write with -o, e.g. -o graph.html" in done.stderr
