"""Parameters made trainable after a run started (a backbone unfrozen for fine-tuning) have
no column in its log: that is said once, in run.json, on stderr and in the explorer's status
line (js/view/run_status.test.ts), at the first full capture after it or at the run's end."""

from __future__ import annotations

import json

from run_models import unfreezing_run

from paddleviz_widget import open_run


def test_layers_unfrozen_mid_run_are_said_not_recorded(tmp_path, capsys):
    path = tmp_path / "run"
    model = unfreezing_run(path, {7: 0, 23: 2}, steps=26, every=10)
    meta = json.loads((path / "run.json").read_text())
    # seen at the first full capture after each unfreezing (step 10), or at the end (25)
    assert meta["unwatched_params"] == [
        {"step": 10, "params": ["0.weight", "0.bias"]},
        {"step": 25, "params": ["2.weight", "2.bias"]},
    ]
    recorded = [p.name for p in open_run(path).params]
    assert recorded == ["4.weight", "4.bias"]  # the columns are still the start's
    trainable = [n for n, p in model.named_parameters() if not p.stop_gradient]
    assert set(trainable) - set(recorded) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    lines = [line for line in capsys.readouterr().err.splitlines() if "made trainable" in line]
    assert len(lines) == 2, lines  # once each
    assert "0.weight, 0.bias" in lines[0] and "seen at step 10" in lines[0]


def test_nothing_said_when_nothing_is_unfrozen(tmp_path, capsys):
    path = tmp_path / "run"
    unfreezing_run(path, {}, steps=12, every=5)
    assert "unwatched_params" not in json.loads((path / "run.json").read_text())
    assert "made trainable" not in capsys.readouterr().err


def test_a_layer_replaced_mid_run_is_said_with_what_its_columns_hold(tmp_path, capsys):
    """A head swapped for a new one of the same names: the log's columns of those names went
    on reading the old tensors (their gradients zeros once cleared: a real-looking 0 where
    the new layer's gradient is not), and the notice called them "made trainable"."""
    import numpy as np
    import paddle

    from paddleviz_widget import trace

    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 1))
    opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
    swapped_at, grads = 5, {}
    with trace(model, stats=True, every=3, run_dir=tmp_path / "run"):
        for step in range(8):
            if step == swapped_at:
                model[2] = paddle.nn.Linear(8, 1)  # same names: 2.weight, 2.bias
                opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
            (model(paddle.randn([2, 4])) ** 2).mean().backward()
            grads[step] = float(np.linalg.norm(model[2].weight.grad.numpy()))
            opt.step()
            opt.clear_grad()
    log = open_run(tmp_path / "run")
    column = log.param_stat("norm")[:, [p.name for p in log.params].index("2.weight")]
    # what the columns hold (the oracle: .grad read after each backward): the old tensor's
    assert np.allclose(column[:swapped_at], [grads[s] for s in range(swapped_at)], rtol=1e-5)
    assert (column[swapped_at:] == 0).all() and min(grads.values()) > 0
    # ... and that is said, where the explorer reads it and on stderr
    assert log.meta["unwatched_params"] == [
        {"step": 6, "params": ["2.weight", "2.bias"], "replaced": ["2.weight", "2.bias"]}
    ]
    err = capsys.readouterr().err
    assert "2 parameters replaced by new ones after the run started (2.weight, 2.bias" in err
    assert "hold the old tensors' gradients" in err and "made trainable" not in err
