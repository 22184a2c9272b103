"""trace(stats=True) on every supported Paddle: with GradNode post hooks (>= 3.0) a graph with
statistics; without them (2.6) a one-step trace is refused saying what to do (its graphs had
no statistics, and problems() then advised trace(stats=True)), and a watched run goes on with
its per-step summary, saying once that its captures have no statistics."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle_versions import HAS_POST_HOOKS

from paddleviz_widget import build_graph, open_run, trace
from paddleviz_widget.tracer.capture.stats_watch import StatsUnavailableError


def _step(fc: paddle.nn.Layer) -> paddle.Tensor:
    loss = fc(paddle.randn([2, 4])).square().mean()
    loss.backward()
    return loss


def test_one_step_stats_work_or_are_refused_naming_the_upgrade():
    fc = paddle.nn.Linear(4, 3)
    if not HAS_POST_HOOKS:
        with pytest.raises(StatsUnavailableError, match=r"paddlepaddle>=3\.0"):
            trace(fc, stats=True)
        return
    with trace(fc, stats=True):
        loss = _step(fc)
    stats = [e for e in build_graph(loss)["edges"] if e.get("stats") is not None]
    assert stats


def test_a_watched_run_with_stats_records_its_summary_on_every_paddle(tmp_path, capfd):
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 3)
    opt = paddle.optimizer.SGD(0.1, parameters=fc.parameters())
    norms = []
    with trace(fc, stats=True, every=2, run_dir=tmp_path / "run"):
        for _ in range(3):
            _step(fc)
            norms.append(float(np.linalg.norm(fc.weight.grad.numpy().astype(np.float64))))
            opt.step()
            opt.clear_grad()
    run = open_run(tmp_path / "run")
    assert run.meta["status"] == "finished" and run.steps.tolist() == [0, 1, 2]
    j = [p.name for p in run.params].index("weight")
    assert run.param_stat("norm")[:, j] == pytest.approx(norms, rel=1e-5)
    said = capfd.readouterr().err
    assert ("captures have no gradient statistics" in said) is not HAS_POST_HOOKS
