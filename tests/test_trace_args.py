"""trace()'s arguments are checked when it is called: `steps=2.5` was taken and the first
`loss.backward()` inside the block raised "TypeError: an integer is required" from the
statistics' deque, in the middle of the user's training loop; `steps="3"` failed with
"'<' not supported", `steps=0` was read as 1, and `run_dir=5` got pathlib's words."""

from __future__ import annotations

import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import build_graph, trace


def _model() -> paddle.nn.Layer:
    paddle.seed(0)
    return paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.ReLU(), paddle.nn.Linear(4, 1))


@requires_post_hooks
@pytest.mark.parametrize(
    ("steps", "error", "words"),
    [
        (2.5, TypeError, "got float 2.5"),
        ("3", TypeError, "got str '3'"),
        (True, TypeError, "got bool True"),
        (0, ValueError, "steps must be >= 1"),
    ],
)
def test_steps_is_checked_before_the_block_runs(steps, error, words):
    model = _model()
    with pytest.raises(error, match=words):
        trace(model, stats=True, steps=steps)
    # nothing was switched on: the training step runs as without the widget
    loss = model(paddle.randn([2, 3])).mean()
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())


@requires_post_hooks
def test_a_whole_number_of_steps_is_kept():
    model = _model()
    with trace(model, stats=True, steps=2):
        for _ in range(3):
            loss = model(paddle.randn([2, 3])).mean()
            loss.backward()
            model.clear_gradients()
    assert len(build_graph(loss)["meta"]["steps"]["index"]) == 2


@pytest.mark.parametrize("run_dir", [5, ["runs/exp1"]])
def test_a_run_dir_that_is_not_a_path_is_named(run_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=r"run_dir is the run log's directory, a path"):
        trace(_model(), stats=True, run_dir=run_dir)
    assert list(tmp_path.iterdir()) == []
