"""Ctrl-C (a real SIGINT) during a backward that runs our Python hooks (a capture's statistics
hooks): the user's loop gets a KeyboardInterrupt, as from a plain backward, not Paddle's
``OSError: (External) KeyboardInterrupt``, nor nothing at all (tracer/capture/interrupts.py).
The backward still runs to its end: its gradients equal the plain backward's (oracle: the same
model and batch, untraced)."""

from __future__ import annotations

import copy
import os
import signal
import threading
import time

import numpy as np
import paddle
from paddle_versions import requires_post_hooks

from paddleviz_widget import trace


def _model() -> paddle.nn.Layer:
    """A backward of ~0.1 s in which the only Python that runs is our hooks'."""
    paddle.seed(0)
    return paddle.nn.Sequential(*[paddle.nn.Linear(1024, 1024) for _ in range(24)])


def _plain_grads(model: paddle.nn.Layer, x: paddle.Tensor) -> list[np.ndarray]:
    twin = copy.deepcopy(model)
    twin.clear_gradients()
    twin(x).square().mean().backward()
    return [p.grad.numpy() for p in twin.parameters()]


@requires_post_hooks  # 2.6: no statistics hooks, no Python of ours in the backward
def test_ctrl_c_in_a_traced_backward_is_a_keyboard_interrupt():
    """Paddle gave ``OSError: (External) KeyboardInterrupt`` for one raised in a capture's
    statistics hook. Signals at a quarter, a half and three quarters of the hooked backward
    (timed on the steps before, after the first capture's one-time set-up)."""
    model, x = _model(), paddle.randn([64, 1024])
    with trace(model, stats=True):
        for _ in range(2):
            loss = model(x).square().mean()
            start = time.perf_counter()
            loss.backward()
            took = time.perf_counter() - start
            model.clear_gradients()
        got = []
        for part in (1 / 4, 1 / 2, 3 / 4):
            loss = model(x).square().mean()
            timer = threading.Timer(part * took, os.kill, (os.getpid(), signal.SIGINT))
            timer.start()
            try:
                loss.backward()
                outcome = "returned"
            except KeyboardInterrupt:
                outcome = "KeyboardInterrupt"
            except BaseException as error:  # noqa: BLE001 (what reaches the user is the point)
                outcome = type(error).__name__
            try:
                timer.join()  # the signal is sent
                time.sleep(0.05)  # and handled
            except KeyboardInterrupt:
                outcome += ", then KeyboardInterrupt"  # (it came after the backward)
            got.append(outcome)
            for a, b in zip([p.grad.numpy() for p in model.parameters()], _plain_grads(model, x)):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)  # the whole backward ran
            model.clear_gradients()
    # Each Ctrl-C reached the loop as KeyboardInterrupt (on the code before: OSError, or none
    # at all, "returned"), at least one from inside a backward (a machine's load moves them).
    assert set(got) <= {"KeyboardInterrupt", "returned, then KeyboardInterrupt"}, got
    assert "KeyboardInterrupt" in got, got
