"""Real Paddle models the tests trace (the seed LeNet and friends)."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn as nn


class LeNet(nn.Layer):
    """The seed paddleviz example model."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2D(3, 6, 3, 1),
            nn.Sigmoid(),
            nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 3, 1),
            nn.Sigmoid(),
            nn.MaxPool2D(2, 2),
        )
        self.fc = nn.Sequential(
            nn.Linear(16 * 6 * 6, 120),
            nn.Sigmoid(),
            nn.Linear(120, 84),
            nn.Sigmoid(),
            nn.Linear(84, 10),
        )

    def forward(self, img: paddle.Tensor) -> paddle.Tensor:
        feature = self.conv(img)
        return self.fc(feature.reshape([img.shape[0], -1]))


def lenet_output(seed: int = 0) -> tuple[LeNet, paddle.Tensor]:
    paddle.seed(seed)
    model = LeNet()
    return model, model(paddle.randn([1, 3, 32, 32]))


def traced_lenet_graph() -> dict[str, Any]:
    """LeNet's graph document, its forward and backward run inside trace(model)."""
    from paddleviz_widget import build_graph, trace

    paddle.seed(0)
    model = LeNet()
    with trace(model):
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward()
    return build_graph(y, model=model)


def resnet18_output() -> tuple[nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    model = paddle.vision.models.resnet18()  # random init: nothing is downloaded
    return model, model(paddle.randn([1, 3, 64, 64]))
