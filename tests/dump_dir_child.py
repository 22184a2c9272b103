"""One backward inside trace(), run as a child process by test_dump_dirs_stale.py:
``python dump_dir_child.py plain`` runs it; ``python dump_dir_child.py hold INSIDE GO`` runs
one whose backward, once Paddle's dump directory is made, touches INSIDE and waits until GO
exists (a process caught in its backward: to be killed there, or to hold its directory)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import paddle

from paddleviz_widget import trace


class Wait(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        if len(sys.argv) > 3:
            Path(sys.argv[2]).touch()
            while not Path(sys.argv[3]).exists():
                time.sleep(0.05)
        return grad


paddle.seed(0)
model = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.Tanh(), paddle.nn.Linear(8, 2))
with trace(model):
    Wait.apply(model(paddle.randn([3, 4]))).sum().backward()
print("done")
