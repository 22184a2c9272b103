"""A layer with no gradient at all on some steps (``clear_grad(set_to_zero=False)`` leaves
``.grad`` None for a branch the backward did not take): those steps are idle for its median,
as zeros are (bug bash round 23). Its median was NaN for a whole window, so its explosion
was never a spike, and the layer beside it was called vanishing beside it."""

from __future__ import annotations

import numpy as np
import paddle
import paddle.nn.functional as F

from paddleviz_widget import open_run, trace


class TwoBranches(paddle.nn.Layer):
    """b1 on two steps of three, b2 on the third: each gets no gradient on the others."""

    def __init__(self) -> None:
        super().__init__()
        self.a = paddle.nn.Linear(20, 32)
        self.b1 = paddle.nn.Linear(32, 32)
        self.b2 = paddle.nn.Linear(32, 32)
        self.out = paddle.nn.Linear(32, 1)

    def forward(self, x: paddle.Tensor, step: int) -> paddle.Tensor:
        h = F.relu(self.a(x))
        h = self.b1(h) if step % 3 else self.b2(h)
        return self.out(F.relu(h))


def _train(tmp_path, blow_up_at: int | None) -> tuple[object, list[float]]:
    paddle.seed(0)
    model = TwoBranches()
    opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
    b2_norms = []  # the oracle: b2's gradient norm from .grad (None: the branch not taken)
    with trace(model, stats=True, every=100, run_dir=tmp_path / "run"):
        for step in range(62):
            if step == blow_up_at:
                model.out.weight.set_value(model.out.weight * 1000)
            rng = np.random.RandomState(step)
            x = rng.randn(32, 20).astype("float32")
            y = np.tanh(x[:, :5]).sum(1, keepdims=True).astype("float32")
            F.mse_loss(model(paddle.to_tensor(x), step), paddle.to_tensor(y)).backward()
            grads = [p.grad.numpy() for p in model.b2.parameters() if p.grad is not None]
            b2_norms.append(np.sqrt(sum((g.astype("float64") ** 2).sum() for g in grads))
                            if grads else np.nan)  # fmt: skip
            opt.step()
            opt.clear_grad(set_to_zero=False)
    return open_run(tmp_path / "run"), b2_norms


def test_the_branch_that_explodes_is_a_spike_and_its_neighbour_does_not_vanish(tmp_path):
    run, b2 = _train(tmp_path, blow_up_at=60)
    taken = np.array(b2[:60])
    assert np.isnan(taken).sum() == 40  # no gradient on 40 steps: the branch not taken
    assert b2[60] > 1e4 * np.nanmax(taken)  # the oracle: b2's gradient exploded at step 60
    found = run.problems()
    at_60 = {(a.kind, a.layer) for a in found if a.step == 60}
    assert ("spike", "b2") in at_60
    assert not [a for a in found if a.kind == "vanishing"], [str(a) for a in found]
    spike = next(a for a in found if a.step == 60 and a.layer == "b2")
    assert spike.params == ["b2.weight", "b2.bias"]
    assert "its largest earlier norm" in str(spike)


def test_branches_taken_by_turns_without_a_gradient_report_nothing(tmp_path):
    run, _ = _train(tmp_path, blow_up_at=None)
    assert run.problems() == []
