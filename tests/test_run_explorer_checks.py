"""The run explorer's checks on real watched runs (trace(model, stats=True, run_dir=...) over a
Paddle model trained here): a step the run does not hold, given to from_run(step=) or set as
``w.step``, is refused naming it and the steps there are (a step not yet written of a run still
being written is taken); the loss stretches that were NaN/Inf are sent whole (the anomalies
name a stretch's first step only), kept apart from steps whose loss was not known; a second
run into a used run dir is refused in words for a notebook and a script alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import paddle
import pytest
from paddle_versions import requires_post_hooks
from wire_comm import WireComm

from paddleviz_widget import GraphWidget, trace
from paddleviz_widget.runs import RunLogError, open_run
from paddleviz_widget.runs.log_writer import RunLogWriter
from paddleviz_widget.runs.params import ParamInfo
from paddleviz_widget.runs.view_data import run_description

pytestmark = requires_post_hooks
NAN_STEPS = range(10, 15)  # the batches with a NaN: their loss NaN, their update skipped


def train(model: paddle.nn.Layer, steps: range, nan_steps: range = range(0)) -> None:
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    for step in steps:
        x = paddle.randn([2, 4])
        if step in nan_steps:
            x[0, 0] = float("nan")
        loss = (model(x) ** 2).mean()
        loss.backward()
        if step not in nan_steps:
            opt.step()
        opt.clear_grad()


@pytest.fixture(scope="module")
def nan_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 steps of two Linear layers, steps 10-14 with a NaN loss."""
    path = tmp_path_factory.mktemp("runs") / "exp1"
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.Linear(4, 2))
    with trace(model, stats=True, every=100, run_dir=path):
        train(model, range(30), NAN_STEPS)
    return path


def test_a_step_the_run_does_not_hold_is_refused_naming_the_steps(nan_run: Path) -> None:
    with pytest.raises(RunLogError) as refused:
        GraphWidget.from_run(nan_run, step=99999, comm=WireComm())
    said = str(refused.value)
    assert "step 99999" in said and "0\u201329 (30 steps)" in said and str(nan_run) in said, said
    with pytest.raises(RunLogError, match="step -5"):
        GraphWidget.from_run(nan_run, step=-5, comm=WireComm())
    w = GraphWidget.from_run(nan_run, step=12, comm=WireComm())
    assert w.step == 12
    with pytest.raises(RunLogError, match=r"step 30 is not in .*0\u201329"):
        w.step = 30
    assert w.step == 12  # unchanged
    w.step = -1  # none: the page picks the opening step
    # The page's own pick is not the kernel's to refuse (it picks recorded steps).
    w.comm.handle_msg(
        {"content": {"data": {"method": "update", "state": {"step": 7}, "buffer_paths": []}},
         "buffers": []}
    )  # fmt: skip
    assert w.step == 7
    w.close()


def test_a_layer_the_run_does_not_have_is_refused_naming_the_close_ones(nan_run: Path) -> None:
    layers = open_run(nan_run).layers
    typo = f"{layers[0]}x"
    with pytest.raises(
        RunLogError, match=f"layer '{typo}' is not a layer of run log .*did you mean"
    ):
        GraphWidget.from_run(nan_run, layer=typo, comm=WireComm())
    w = GraphWidget.from_run(nan_run, layer=layers[0], comm=WireComm())
    with pytest.raises(RunLogError, match="is not a layer"):
        w.layer = typo
    assert w.layer == layers[0]
    w.layer = ""  # none
    w.close()


def test_a_step_not_yet_written_of_a_running_run_is_taken(tmp_path: Path) -> None:
    paddle.seed(0)
    model = paddle.nn.Linear(4, 2)
    with trace(model, stats=True, every=100, run_dir=tmp_path / "run"):
        train(model, range(5))
        w = GraphWidget.from_run(tmp_path / "run", step=8, comm=WireComm())
        assert w.step == 8  # it may come
        with pytest.raises(RunLogError, match="still being written"):
            w.step = -3
        train(model, range(5, 10))
        assert w.refresh() and 8 in np.frombuffer(w._steps, "<f8")
        w.close()


def test_every_step_of_a_nan_loss_stretch_is_sent(nan_run: Path) -> None:
    run = open_run(nan_run)
    assert np.isnan(run.loss[list(NAN_STEPS)]).all()
    kinds = [(a.step, a.kind) for a in run.anomalies]
    assert (NAN_STEPS[0], "nonfinite") in kinds and (NAN_STEPS[1], "nonfinite") not in kinds
    assert run_description(run)["nonfinite_loss"] == [[NAN_STEPS[0], NAN_STEPS[-1]]]


@pytest.mark.parametrize("steps", [5, 250], ids=["tail", "parts and tail"])
def test_an_unknown_loss_is_not_a_nan_loss(tmp_path: Path, steps: int) -> None:
    # The run log's own writer, with a loss it was not told (None) beside a NaN and an Inf.
    params = [ParamInfo("lin.w", "lin", (2,), "float32")]
    writer = RunLogWriter(tmp_path / "run", params=params, layers=["lin"], every=100,
                          thresholds={})  # fmt: skip
    losses = {1: None, 2: float("nan"), 3: float("inf"), steps - 1: None}
    for step in range(steps):
        g = np.array([1.0])
        writer.write_step(step, g, g, np.zeros(1), np.zeros(1), losses.get(step, 1.0))
    writer.close()
    run = open_run(tmp_path / "run")
    assert run.loss_unknown.tolist() == [s in (1, steps - 1) for s in range(steps)]
    assert run_description(run)["nonfinite_loss"] == [[2, 3]]


def test_a_second_run_into_a_used_run_dir_is_told_the_fix_in_a_notebooks_words(
    tmp_path: Path,
) -> None:
    paddle.seed(0)
    model = paddle.nn.Linear(4, 2)
    path = tmp_path / "runs" / "exp1"
    with trace(model, stats=True, every=100, run_dir=path):
        train(model, range(2))
    # the script started again, or the notebook's cell run again
    with pytest.raises(RunLogError) as refused, trace(model, stats=True, run_dir=path):
        train(model, range(2))
    said = str(refused.value)
    assert "launch" not in said, said  # no launch in a notebook
    assert "not resumed" in said and "finished" in said, said
    assert (
        f'run_dir="{path.with_name("exp2")}"' in said
        and f"--run-dir {path.with_name('exp2')}" in said
    )
    assert f"delete {path}" in said
    assert open_run(path).steps.tolist() == [0, 1]  # the first run untouched
