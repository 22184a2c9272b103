"""A watched trace() refused a run_dir that already holds a run log with "... or delete the old
logs", also when that log is being written right now: by a trace(run_dir=) this process has
open (a trace nested in another on the same dir), or by another live training process (the
script started twice). Deleting it then wrecks the run being written; the refusal says who is
writing it instead."""

from __future__ import annotations

import time
from pathlib import Path

import paddle
import pytest
from paddle_versions import requires_post_hooks
from run_logs import start_writer

from paddleviz_widget import trace
from paddleviz_widget.runs import RunLogError, open_run

pytestmark = requires_post_hooks
REPO = Path(__file__).resolve().parents[1]


def steps(model: paddle.nn.Layer, n: int) -> None:
    for _ in range(n):
        (model(paddle.randn([2, 4])) ** 2).mean().backward()
        model.clear_gradients()


def test_a_watched_trace_nested_on_its_outer_traces_dir_is_told_not_to_delete_it(
    tmp_path: Path,
) -> None:
    paddle.seed(0)
    model = paddle.nn.Linear(4, 1)
    outer = trace(model, stats=True, every=2, run_dir=tmp_path / "run")
    with pytest.raises(RunLogError) as refused, outer:  # noqa: PT012 (steps, then the inner)
        steps(model, 2)
        with trace(model, stats=True, every=2, run_dir=tmp_path / "run"):
            steps(model, 1)
    said = str(refused.value)
    assert "this process is writing now" in said and "needs no run_dir" in said, said
    assert "delete" not in said
    assert open_run(tmp_path / "run").steps.tolist() == [0, 1]  # the outer run's steps stand


def test_a_run_dir_another_live_process_writes_is_refused_naming_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    writer = start_writer(run_dir, 400, 0.05)
    try:
        deadline = time.monotonic() + 120
        while not (run_dir / "run.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        paddle.seed(0)
        model = paddle.nn.Linear(4, 1)
        with pytest.raises(RunLogError) as refused, trace(model, run_dir=run_dir):
            steps(model, 1)
        said = str(refused.value)
        assert f"process {writer.pid}" in said and "writing now" in said, said
        assert "delete" not in said
    finally:
        writer.kill()
        writer.wait()
    # once that process is gone, the usual words (the log is the user's to delete)
    with (
        pytest.raises(RunLogError, match="or delete .* to write it again"),
        trace(model, run_dir=run_dir),
    ):
        steps(model, 1)
