"""Where a run log goes: the directory the user named, whatever the script does to its working
directory, and only if it can be written there (refused before the training otherwise)."""

from __future__ import annotations

import json
import os

import paddle
import pytest

from paddleviz_widget import RunLogError, open_run, trace


def test_a_loop_that_changes_directory_keeps_its_log_where_it_was_named(tmp_path, monkeypatch):
    """A relative run_dir is the one of the working directory at trace(): a script that
    chdirs while it trains (an output folder, Hydra's run dir) split its log between two
    directories and stopped it ("FileNotFoundError ... runs/x/digests/...")."""
    from run_models import TinyMLP, train

    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    paddle.seed(0)
    model = TinyMLP()
    opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())

    def wander(step: int, x: paddle.Tensor) -> None:
        if step == 3:
            os.chdir(tmp_path / "elsewhere")

    with trace(model, every=5, run_dir="runs/x"):
        train(model, opt, 7, before=wander)
    run = open_run(tmp_path / "runs" / "x")
    assert run.meta["status"] == "finished" and run.steps.tolist() == list(range(7))
    assert run.captured_steps == [0, 5]
    assert not any((tmp_path / "elsewhere").iterdir())


def test_a_run_dir_that_cannot_be_made_is_refused_before_the_training(tmp_path):
    """A file where a folder of the path should be (or a read-only filesystem: the same check,
    tried by hand on a read-only tmpfs): trace() raised NotADirectoryError from inside the
    writer; the CLI ran the whole script with no log (tests/test_cli_run_dir.py)."""
    (tmp_path / "notes").write_text("a file")
    model = paddle.nn.Linear(2, 2)
    refused = pytest.raises(RunLogError, match="cannot make the run log .*notes is a file")
    with refused, trace(model, stats=True, run_dir=tmp_path / "notes" / "exp1"):
        model(paddle.ones([1, 2])).sum().backward()
    assert model.weight.grad is None  # nothing ran


def _claim(run_dir, barrier, results) -> None:
    """A forked process: at the barrier, start a run log in ``run_dir`` (tests below)."""
    from paddleviz_widget.runs.log_writer import RunLogWriter
    from paddleviz_widget.runs.params import ParamInfo

    params = [ParamInfo("fc.weight", "fc", (2,), "float32")]
    barrier.wait()
    try:
        writer = RunLogWriter(run_dir, params=params, layers=["fc"], every=1, thresholds={})
        said = json.dumps(["wrote", writer.meta["pid"]])
    except RunLogError as error:
        said = json.dumps(["refused", str(error)])
    (results / str(os.getpid())).write_text(said)
    os._exit(0)  # nothing more of this fork: its writer's files are what is checked


def test_two_processes_starting_a_log_in_one_dir_at_once_one_is_refused(tmp_path):
    """A command started twice on one run dir: both passed the "already holds a run log"
    check before either wrote run.json (the CLI checks at start, writes at the first step),
    then both wrote, their parts and captures mixed in one log, silently."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for round_ in range(4):
        run_dir = tmp_path / f"run{round_}"
        barrier, results = context.Barrier(2), tmp_path / f"said{round_}"
        results.mkdir()
        children = [context.Process(target=_claim, args=(run_dir, barrier, results))
                    for _ in range(2)]  # fmt: skip
        for child in children:
            child.start()
        for child in children:
            child.join(60)
        got = sorted(json.loads(f.read_text()) for f in results.iterdir())
        assert [kind for kind, _ in got] == ["refused", "wrote"], got
        # the loser was refused either at the claim (the race) or, when the winner's run.json
        # was already there as it started (a slow fork), by the check before it
        assert ("another process started one there at the same time" in got[0][1]
                or "already holds a run log" in got[0][1]), got[0][1]  # fmt: skip
        assert str(run_dir) in got[0][1]
        assert open_run(run_dir).meta["pid"] == got[1][1]  # the log is the writer's own


def test_a_run_dir_under_home_written_with_a_tilde_is_there(tmp_path, monkeypatch):
    """--run-dir=~/runs/x reaches the CLI unexpanded (the shell expands ~ only at a word's
    start): the log went to a folder named "~" in the working directory, and
    open_run("~/runs/x") said it does not exist."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    model = paddle.nn.Linear(2, 2)
    with trace(model, stats=True, run_dir="~/runs/x"):
        model(paddle.ones([1, 2])).sum().backward()
    assert open_run(tmp_path / "home" / "runs" / "x").steps.tolist() == [0]
    assert open_run("~/runs/x").steps.tolist() == [0]
    assert not any((tmp_path / "work").iterdir())
