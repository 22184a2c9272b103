"""Models for the to_static program view tests (tests/test_program_view.py), defined in a file
so that paddle.jit.to_static can read their source."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn as nn


class MLP(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(paddle.tanh(self.fc1(x)))


class CNN(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2D(1, 2, 3)
        self.bn = nn.BatchNorm2D(2)
        self.fc = nn.Linear(2 * 4 * 4, 3)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc(paddle.flatten(nn.functional.relu(self.bn(self.conv(x))), 1))


class Block(nn.Layer):
    """A transformer encoder block (Paddle's own layer)."""

    def __init__(self) -> None:
        super().__init__()
        self.block = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.block(x)


class SqrtAt(nn.Layer):
    """Its backward makes an Inf from finite values: d sqrt(x)/dx at 0 (layer ``act``)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = Sqrt()
        self.dead = nn.Linear(4, 4)  # its output is multiplied by zero: all-zero gradients

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.act(nn.functional.relu(self.fc(x))) + self.dead(x) * 0.0


class Sqrt(nn.Layer):
    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.sqrt(x)


def inputs(name: str) -> Any:
    paddle.seed(0)
    model = {"mlp": MLP, "cnn": CNN, "block": Block, "sqrt": SqrtAt}[name]()
    x = {
        "mlp": lambda: paddle.randn([3, 4]),
        "cnn": lambda: paddle.randn([2, 1, 6, 6]),
        "block": lambda: paddle.randn([2, 5, 16]),
        "sqrt": lambda: -paddle.ones([3, 4]),  # relu makes zeros: sqrt'(0) is Inf
    }[name]()
    return model, x


class Broken(nn.Layer):
    """Two graph breaks (a Python float of a tensor): SOT compiles the pieces between."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 8)
        self.fc3 = nn.Linear(8, 2)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = paddle.tanh(self.fc1(x))
        if float(h.sum()) > 1e9:
            h = h * 0
        h = paddle.tanh(self.fc2(h))
        if float(h.sum()) > 1e9:
            h = h * 0
        return self.fc3(h)


class Outer(nn.Layer):
    """An eager model with a to_static sublayer: the program sends a gradient to an eager op."""

    def __init__(self) -> None:
        super().__init__()
        self.pre = nn.Linear(3, 4)
        self.mlp = paddle.jit.to_static(MLP(), full_graph=True)
        self.post = nn.Linear(2, 1)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.post(self.mlp(nn.functional.relu(self.pre(x))))
