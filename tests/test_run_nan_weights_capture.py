"""The full capture after a run's first non-finite step: the model's own code divided by 0 at
step 25 (the loss NaN), Adam wrote the NaN gradients into the weights, and the capture of step
26, where the run points the user, said "this Linear's forward output (fc1) was the first to
hold a NaN/Inf: one of its 2 ops made it", blaming a layer whose ops did nothing wrong (bug
bash round 23). Its weights were NaN already: now it says so, and where to look."""

from __future__ import annotations

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle_versions import HAS_POST_HOOKS

from paddleviz_widget import open_run, trace


class DividesOnce(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(20, 32)
        self.fc2 = paddle.nn.Linear(32, 1)
        self.calls = 0

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        self.calls += 1
        count = paddle.full([1], 0.0 if self.calls == 26 else 1.0)  # 0 at step 25
        return self.fc2(F.relu(self.fc1(x)) / count)


def test_the_capture_after_a_nan_step_says_the_weights_were_nan_already(tmp_path):
    paddle.seed(0)
    model = DividesOnce()
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    weights_finite = []  # the oracle: fc1.weight finite before each step's forward
    with trace(model, stats=True, every=100, run_dir=tmp_path / "run"):
        for step in range(28):
            weights_finite.append(bool(np.isfinite(model.fc1.weight.numpy()).all()))
            rng = np.random.RandomState(step)
            x = paddle.to_tensor(rng.randn(16, 20).astype("float32"))
            F.mse_loss(model(x), paddle.to_tensor(rng.randn(16, 1).astype("float32"))).backward()
            opt.step()
            opt.clear_grad()
    assert weights_finite[:26] == [True] * 26 and not weights_finite[26]
    run = open_run(tmp_path / "run")
    [first] = run.problems()
    assert (first.step, first.kind) == (25, "nonfinite") and "the loss is nan" in str(first)
    # a NaN loss makes every gradient NaN: the finding is the whole model's, not fc1's (the
    # first layer listed), and it says where it began (it read as fc1's, in the explorer too)
    assert first.layer == "" and "it began in the forward" in str(first)
    assert 26 in run.captured_steps  # the step after it, where the run points
    if not HAS_POST_HOOKS:  # 2.6: captures without statistics show no problems (said once)
        assert "problems" not in run.graph(26)["meta"]
        return
    [problem] = run.graph(26)["meta"]["problems"]
    assert problem["kind"] == "nonfinite" and problem["layer"] == "fc1"
    reason = problem["reason"]
    assert "own parameters already held a NaN/Inf when it ran (fc1.weight, fc1.bias)" in reason
    assert "an earlier step's update wrote them" in reason
    assert "was the first to hold" not in reason
