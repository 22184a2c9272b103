"""Where a run log goes: the directory the user named, whatever the script does to its working
directory, and only if it can be written there (refused before the training otherwise)."""

from __future__ import annotations

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
