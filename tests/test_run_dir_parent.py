"""A directory above run logs (runs/ holding exp1/, exp2/; a job's rank-NNNNN/ logs) opened as
one: the error names the logs below it and how to open one (it said "not a run log")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import paddle
import paddle.nn.functional as F
import pytest

from paddleviz_widget import GraphWidget, open_run, trace
from paddleviz_widget.runs.errors import RunLogError

REPO = Path(__file__).resolve().parent.parent


def _logged(path: Path) -> None:
    paddle.seed(0)
    model = paddle.nn.Linear(4, 1)
    with trace(model, stats=True, run_dir=path):
        for _ in range(3):
            F.mse_loss(model(paddle.randn([2, 4])), paddle.zeros([2, 1])).backward()


def test_a_folder_of_run_logs_names_them(tmp_path):
    for name in ("exp2", "exp1"):
        _logged(tmp_path / "runs" / name)
    (tmp_path / "runs" / "notes").mkdir()  # not a log: not named
    said = f"{tmp_path / 'runs'} is not a run log but holds run logs exp1, exp2: open one"
    for opener in (open_run, GraphWidget.from_run):
        with pytest.raises(RunLogError, match="holds run logs") as error:
            opener(tmp_path / "runs")
        assert said in str(error.value) and str(tmp_path / "runs" / "exp1") in str(error.value)
    done = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "view", "runs", "-o", "run.html"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1 and "runs is not a run log but holds run logs exp1, exp2" in (
        done.stderr
    )


def test_a_jobs_rank_logs_opened_as_one_log_are_named(tmp_path):
    _logged(tmp_path / "one")
    for rank in (0, 1):
        shutil.copytree(tmp_path / "one", tmp_path / "job" / f"rank-0000{rank}")
    with pytest.raises(RunLogError) as error:
        open_run(tmp_path / "job")
    assert "holds the rank logs of a multi-rank run (rank-00000, rank-00001)" in str(error.value)
    assert "open_ranks" in str(error.value)
    # a folder of such jobs names them too
    shutil.move(tmp_path / "job", tmp_path / "runs" / "job")
    with pytest.raises(RunLogError, match="holds run logs job: open one"):
        open_run(tmp_path / "runs")
