"""backward() on a tensor with no backward graph (a loss computed under no_grad, a detached
tensor, a parameter itself) inside trace() does what plain Paddle does with it (a no-op, or
Paddle's own error), never an error of ours: the tracer's AssertionError ("scan() needs the
roots") used to escape into the user's loop from every entry point, watched runs too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import paddle
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import trace


def _calls(fc: paddle.nn.Linear, x: paddle.Tensor) -> dict[str, Callable[[], Any]]:
    def no_grad_loss() -> paddle.Tensor:
        with paddle.no_grad():
            return fc(x).sum()

    return {
        "no_grad-backward": lambda: no_grad_loss().backward(),
        "detached-autograd.backward": lambda: paddle.autograd.backward([fc(x).sum().detach()]),
        "detached-paddle.grad": lambda: paddle.grad(
            [fc(x).sum().detach()], [fc.weight], allow_unused=True
        ),
        "parameter-backward": lambda: fc.bias.backward(),
    }


def _outcome(call: Callable[[], Any], fc: paddle.nn.Linear) -> tuple[str, list[Any]]:
    try:
        call()
        said = "ok"
    except Exception as exc:  # Paddle's own error is the expected outcome then
        said = type(exc).__name__
    grads = [None if p.grad is None else p.grad.numpy().copy() for p in fc.parameters()]
    for p in fc.parameters():  # to None (Paddle 2.6's clear_gradients takes no argument)
        p.clear_gradient(False)
    return said, grads


@pytest.mark.parametrize("name", list(_calls(paddle.nn.Linear(1, 1), paddle.ones([1, 1]))))
@pytest.mark.parametrize(
    "how",
    ["trace", pytest.param("stats", marks=requires_post_hooks),
     pytest.param("watched", marks=requires_post_hooks)],
)  # fmt: skip
def test_backward_with_no_graph_inside_trace_is_paddles_own(
    name: str, how: str, tmp_path: Path
) -> None:
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 3)
    x = paddle.randn([2, 4])
    calls = _calls(fc, x)
    plain = _outcome(calls[name], fc)
    options: dict[str, Any] = {
        "trace": {},
        "stats": {"stats": True},
        "watched": {"stats": True, "every": 1, "run_dir": str(tmp_path / "run")},
    }[how]
    with trace(fc, **options):
        traced = _outcome(calls[name], fc)
        fc(x).sum().backward()  # and the next real backward is traced as usual
    assert traced[0] == plain[0]
    for a, b in zip(traced[1], plain[1]):
        assert (a is None) == (b is None) and (a is None or np.array_equal(a, b))
