"""A tiny MLP and its training loop for the run-log tests (also run as a child process by
test_run_log.py's SIGKILL test: ``python run_models.py RUN_DIR``)."""

from __future__ import annotations

import sys
import zlib  # noqa: F401  before paddle, as the README says for Paddle 2.6
from collections.abc import Callable
from typing import Any

import paddle
import paddle.nn.functional as F


class TinyMLP(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(8, 16)
        self.fc2 = paddle.nn.Linear(16, 16)
        self.fc3 = paddle.nn.Linear(16, 1)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def layer_grad_l2(layer: paddle.nn.Layer) -> float:
    """The L2 norm of a layer's gradients, from p.grad in float64 NumPy (the tests' oracle)."""
    import numpy as np

    return float(np.sqrt(sum((p.grad.numpy().astype(np.float64) ** 2).sum()
                             for p in layer.parameters())))  # fmt: skip


def batch(step: int) -> tuple[paddle.Tensor, paddle.Tensor]:
    x = paddle.randn([16, 8])
    return x, x.sum(axis=1, keepdim=True) * 0.3


def train(
    model: paddle.nn.Layer, opt: Any, steps: int,
    before: Callable[[int, paddle.Tensor], None] | None = None,
    after_backward: Callable[[int, paddle.Tensor], bool] | None = None,
) -> None:  # fmt: skip
    """``before(step, x)`` may change the batch in place; ``after_backward(step, loss)``
    returns False to skip the optimizer step (as a loss scaler does on NaN)."""
    for step in range(steps):
        x, y = batch(step)
        if before is not None:
            before(step, x)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        if after_backward is None or after_backward(step, loss):
            opt.step()
        opt.clear_grad()


def _three_linears() -> paddle.nn.Layer:
    paddle.seed(0)
    return paddle.nn.Sequential(
        paddle.nn.Linear(8, 16), paddle.nn.ReLU(), paddle.nn.Linear(16, 16), paddle.nn.ReLU(),
        paddle.nn.Linear(16, 3),
    )  # fmt: skip


def unfreezing_run(path, unfreeze_at: dict[int, int], steps: int, every: int) -> paddle.nn.Layer:
    """A watched run whose first two Linear layers start frozen; ``unfreeze_at``: step ->
    the Sequential index of the layer made trainable before that step (test_run_unwatched)."""
    model = _three_linears()
    for p in [*model[0].parameters(), *model[2].parameters()]:
        p.stop_gradient = True
    from paddleviz_widget import trace

    opt = paddle.optimizer.Adam(1e-2, parameters=model.parameters())
    with trace(model, stats=True, every=every, run_dir=path):
        for step in range(steps):
            if step in unfreeze_at:
                for p in model[unfreeze_at[step]].parameters():
                    p.stop_gradient = False
            loss = model(paddle.randn([4, 8])).square().mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
    return model


def main(run_dir: str, part_steps: str | None = None) -> None:
    """``part_steps``: steps per Parquet part (default: the watch's own, format.flush_every)."""
    from paddleviz_widget import trace
    from paddleviz_widget.runs import watch

    if part_steps is not None:
        watch.flush_every = lambda n: int(part_steps)  # type: ignore[assignment]

    paddle.seed(0)
    model = TinyMLP()
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())

    def report(step: int, loss: paddle.Tensor) -> bool:
        print(f"{step} {float(loss)!r}", flush=True)  # the parent's record of completed steps
        return True

    with trace(model, stats=True, every=50, run_dir=run_dir):
        train(model, opt, 10**6, after_backward=report)


if __name__ == "__main__":
    main(*sys.argv[1:3])
