"""Planted bugs inside models run under paddle.jit.to_static (tests/test_program_problems.py),
in a file so that to_static can read their source: a NaN made in the forward by one named
sublayer (a log of negative values), and a dead parameter (a sublayer whose output is
multiplied by zero), in an MLP and in a CNN with BatchNorm."""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn as nn
import paddle.nn.functional as F


class NegLog(nn.Layer):
    """``fc(x) * log(scale * (|x| + 1))`` with ``scale = -1``: log of a negative number, a NaN
    in the forward."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.scale = -1.0  # a Python constant: to_static bakes it into the program

    def forward(self, x: Any) -> Any:
        return self.fc(x) * paddle.log(self.scale * (x.abs() + 1.0)).mean()


class Plain(nn.Layer):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: Any) -> Any:
        return F.relu(self.fc(x))


class MLP(nn.Layer):
    """embed -> block -> head, plus a ``dead`` branch multiplied by zero."""

    def __init__(self, nan: bool = True) -> None:
        super().__init__()
        self.embed = nn.Linear(8, 16)
        self.block = NegLog(16) if nan else Plain(16)
        self.dead = nn.Linear(8, 2)
        self.head = nn.Linear(16, 2)

    def forward(self, x: Any) -> Any:
        h = self.block(F.relu(self.embed(x)))
        return self.head(h) + self.dead(x) * 0.0


class ConvLog(nn.Layer):
    """conv -> BatchNorm -> ``log`` of a negative shift: a NaN after the BatchNorm."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2D(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2D(4)

    def forward(self, x: Any) -> Any:
        y = self.bn(self.conv(x))
        return y + paddle.log(-y.abs() - 1.0)


class CNN(nn.Layer):
    """stem (conv + BatchNorm + dropout) -> stage -> pool -> fc, plus a dead 1x1 conv."""

    def __init__(self, nan: bool = True) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2D(3, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU(),
                                  nn.Dropout(0.2))  # fmt: skip
        self.stage = ConvLog() if nan else nn.Sequential(nn.Conv2D(4, 4, 3, padding=1),
                                                         nn.BatchNorm2D(4))  # fmt: skip
        self.dead = nn.Conv2D(3, 4, 1)
        self.fc = nn.Linear(4, 5)

    def forward(self, x: Any) -> Any:
        h = self.stage(self.stem(x)) + self.dead(x) * 0.0
        return self.fc(paddle.flatten(F.adaptive_avg_pool2d(h, 1), 1))


def make(name: str, nan: bool = True) -> tuple[nn.Layer, Any]:
    paddle.seed(0)
    if name == "mlp":
        return MLP(nan), paddle.randn([4, 8])
    return CNN(nan), paddle.randn([2, 3, 8, 8])
