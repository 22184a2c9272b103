"""A paddle.grad that raises inside trace(stats=True) leaves the process as it found it.

Untraced, such a call (an input the outputs do not reach, ``no_grad_vars`` cutting the only
path, a user hook that raises) raises and the next paddle.grad works. Traced with statistics
before grad_copies.py, the next paddle.grad, inside the block or after it, aborted the whole
process (Paddle freed its copies of our hooks with the GIL released). Each case runs in its
own process, since the failure is the process dying.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from paddle_versions import requires_post_hooks

pytestmark = requires_post_hooks

REPO = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import paddle
    import paddle.nn as nn
    from paddleviz_widget import build_graph, trace

    CASE = {case!r}


    def failing_grad(model):
        x = paddle.randn([3, 6])
        x.stop_gradient = False
        h = model[0](x)
        y = model[2](model[1](h)).sum()
        if CASE == "no_grad_vars":  # the only path from y to x cut at h
            paddle.grad([y], [x], no_grad_vars=[h])
        elif CASE == "unreached":  # z is no input of y
            z = paddle.randn([3])
            z.stop_gradient = False
            paddle.grad([y], [z])
        else:  # the user's own hook raises inside the backward
            def boom(grad):
                raise RuntimeError("the user's hook")

            h.register_hook(boom)
            paddle.grad([y], [x])


    def input_grad(model):
        paddle.seed(7)
        x = paddle.randn([3, 6])
        x.stop_gradient = False
        (g,) = paddle.grad([model(x).sum()], [x])
        return g.numpy()


    paddle.seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    expected = input_grad(model)  # before any trace: the oracle
    with trace(model, stats=True):
        try:
            failing_grad(model)
        except Exception as exc:  # Paddle's own error, as untraced
            print("raised", type(exc).__name__)
        inside = input_grad(model)  # the next paddle.grad, inside the block
        paddle.seed(7)
        x = paddle.randn([3, 6])
        x.stop_gradient = False
        loss = model(x).sum()
        loss.backward()
    after = input_grad(model)  # and after it
    assert np.array_equal(inside, expected) and np.array_equal(after, expected)
    doc = build_graph(loss)  # the block's later backward is still annotated
    assert all(e.get("grad") is not None for e in doc["edges"]), doc["edges"]
    print("OK")
    """
)


@pytest.mark.parametrize("case", ["no_grad_vars", "unreached", "user_hook_raises"])
def test_a_failed_paddle_grad_leaves_the_next_one_working(case: str, tmp_path: Path) -> None:
    script = tmp_path / "failed_grad.py"
    script.write_text(SCRIPT.format(case=case))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    # Paddle's own error types, as untraced (a hook's error reaches the caller as OSError)
    error = "OSError" if case == "user_hook_raises" else "ValueError"
    assert run.stdout.split() == ["raised", error, "OK"], run.stdout
