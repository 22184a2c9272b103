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
