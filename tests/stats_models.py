"""Models whose gradients have something to show (tests/browser/test_grad_stats_browser.py):
a LeNet trained a few steps under trace(stats=True, steps=K), with a NaN and a dead parameter."""

from __future__ import annotations

import paddle
import paddle.nn as nn
from models import LeNet


class Gate(nn.Layer):
    """``y * sqrt(gate * mask)``: where ``mask`` is 0, the gate's gradient is NaN (0 * Inf,
    made in sqrt's backward)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.gate = self.create_parameter([size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, y: paddle.Tensor, mask: paddle.Tensor) -> paddle.Tensor:
        return y * paddle.sqrt(self.gate * mask)


class SickLeNet(nn.Layer):
    """LeNet, then a Gate (a NaN where the mask is 0), plus ``dead``, which only ever enters
    multiplied by 0 (its gradient is all zeros)."""

    def __init__(self) -> None:
        super().__init__()
        self.net = LeNet()
        self.head = Gate(10)
        self.dead = self.create_parameter([10], is_bias=True)

    def forward(self, img: paddle.Tensor, mask: paddle.Tensor) -> paddle.Tensor:
        return self.head(self.net(img), mask) + self.dead * 0.0


def trained_with_stats(steps: int = 5, nan_last: bool = True) -> tuple[SickLeNet, paddle.Tensor]:
    """``steps`` SGD steps traced with stats; the last one's mask has a 0 (a NaN) if
    ``nan_last``. Returns the model and the last step's output."""
    from paddleviz_widget import trace

    paddle.seed(0)
    model = SickLeNet()
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=model.parameters())
    with trace(model, stats=True, steps=steps):
        for step in range(steps):
            mask = paddle.ones([10])
            if nan_last and step == steps - 1:
                mask[3] = 0.0
            y = model(paddle.randn([2, 3, 32, 32]), mask)
            y.square().mean().backward()
            if step < steps - 1:
                opt.step()
            opt.clear_grad()
    return model, y
