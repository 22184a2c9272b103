"""Where a run log goes: the directory the user named, whatever the script does to its working
directory, and only if it can be written there (refused before the training otherwise)."""

from __future__ import annotations

import os

import paddle

from paddleviz_widget import open_run, trace


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
