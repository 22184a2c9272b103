"""A run explorer left open while its run directory is deleted, moved or written again by a new
run (the user re-runs the training cell or script): real watched LeNet runs (tests/run_logs.py).

The explorer reads a step's summary and graph when the step is picked, from files of the same
names in any run of the same length: picking a step after a re-run showed the new run's numbers
under the old run's heatmap, silently. The oracle is the run the explorer shows (its own
heatmap: no NaN at step NAN_STEP) against the new run's NaN batch there."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paddle_versions import requires_post_hooks
from run_logs import watched_training
from test_run_view import WireComm, from_page

from paddleviz_widget.runs.view_widget import REFRESH_MESSAGE, STEP_MESSAGE, RunWidget

pytestmark = requires_post_hooks
STEPS, EVERY, NAN_STEP = 30, 10, 3


def explorer(path: Path) -> RunWidget:
    return RunWidget(path, comm=WireComm())


def step_reply(w: RunWidget, step: int) -> tuple[dict[str, Any], list[bytes]]:
    (reply, buffers), *_ = from_page(w, {"type": STEP_MESSAGE, "id": 1, "step": step})
    return reply, buffers


def test_a_step_picked_after_a_re_run_in_the_same_dir_is_not_the_new_runs(tmp_path: Path) -> None:
    path = tmp_path / "run"
    watched_training(path, STEPS, nan_step=None, every=EVERY)
    w = explorer(path)
    assert w.run["captured"] == [0, 10, 20]
    shutil.rmtree(path)
    watched_training(path, STEPS, nan_step=NAN_STEP, every=EVERY)  # the cell run again

    reply, buffers = step_reply(w, NAN_STEP)
    # Before the fix: no error, and the NaN counts of the new run's NaN batch (162, 6, ...)
    # under the old run's heatmap, which has none.
    assert not buffers and "now holds another run" in reply["error"], (reply, buffers)
    reply, buffers = step_reply(w, 10)
    assert not reply["captured"] and "now holds another run" in reply["error"]
    assert "layer_rows" not in reply and not buffers  # not the new run's graph

    (refresh, _), *_ = from_page(w, {"type": REFRESH_MESSAGE})
    assert "now holds another run" in refresh["error"]
    assert w.run["steps"] == STEPS  # the old run's view stands


def test_a_run_dir_moved_away_is_said_and_its_steps_stay(tmp_path: Path) -> None:
    path = tmp_path / "run"
    watched_training(path, STEPS, nan_step=NAN_STEP, every=EVERY)
    w = explorer(path)
    shown, described = bytes(w._norms), dict(w.run)
    assert described["anomalies"] and described["captured"]
    path.rename(tmp_path / "elsewhere")

    # Before the fix: refresh() said True and the view lost its captures and anomalies (their
    # files gone); a picked step said a part "was damaged after it was written".
    (refresh, _), *_ = from_page(w, {"type": REFRESH_MESSAGE})
    assert "no longer holds the run read here" in refresh["error"], refresh
    assert bytes(w._norms) == shown
    assert {k: v for k, v in w.run.items() if k != "read_at"} == {
        k: v for k, v in described.items() if k != "read_at"
    }
    with pytest.raises(Exception, match="deleted or moved"):
        w.refresh()
    reply, buffers = step_reply(w, 25)
    assert "deleted or moved" in reply["error"] and "damaged" not in reply["error"]
    assert not buffers

    (tmp_path / "elsewhere").rename(path)  # moved back: the same run reads again
    reply, buffers = step_reply(w, NAN_STEP)
    summary = np.frombuffer(buffers[0], "<f4").reshape(4, -1)
    assert summary[2].sum() > 0  # this run's NaN batch
