"""Ctrl-C (a real SIGINT) during a backward that runs our Python hooks: the user's loop gets a
KeyboardInterrupt, as from a plain backward. A big model's reduce hooks (runs/early_read.py):
Paddle lost the KeyboardInterrupt raised in one (tracer/capture/interrupts.py); the backward
still ran to its end: every gradient equals the plain backward's (oracle: the same model and
batch, untraced). A capture's statistics hooks: Paddle passes it on."""

from __future__ import annotations

import copy
import os
import signal
import threading
import time

import numpy as np
import paddle
import pytest

from paddleviz_widget import open_run, trace
from paddleviz_widget.runs.grad_kernel import kernel


def _model() -> paddle.nn.Layer:
    """A backward of ~0.1 s in which the only Python that runs is our hooks'."""
    paddle.seed(0)
    return paddle.nn.Sequential(*[paddle.nn.Linear(1024, 1024) for _ in range(24)])


def _interrupted(model: paddle.nn.Layer, x: paddle.Tensor) -> tuple[str, float]:
    """The exception a backward with a SIGINT 20 ms in raised ('' for none), and how long
    the backward took (the signal must come inside it)."""
    loss = model(x).square().mean()
    threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT)).start()
    start = time.perf_counter()
    try:
        loss.backward()
        return "", time.perf_counter() - start
    except KeyboardInterrupt:
        return "KeyboardInterrupt", time.perf_counter() - start
    except BaseException as error:  # noqa: BLE001 (what reaches the user is the point)
        return type(error).__name__, time.perf_counter() - start
    finally:
        time.sleep(0.05)  # (the timer has fired)


def _plain_grads(model: paddle.nn.Layer, x: paddle.Tensor) -> list[np.ndarray]:
    twin = copy.deepcopy(model)
    twin.clear_gradients()
    twin(x).square().mean().backward()
    return [p.grad.numpy() for p in twin.parameters()]


def test_ctrl_c_in_a_watched_big_models_backward_is_a_keyboard_interrupt(tmp_path):
    if kernel() is None:
        pytest.skip("llvmlite is not installed (the fast extra): no reduce hooks of ours")
    model, x = _model(), paddle.randn([256, 1024])
    with trace(model, every=1000, run_dir=tmp_path / "run"):
        for _ in range(3):  # a capture, the compiled call's first step, then hooks of ours
            model(x).square().mean().backward()
            model.clear_gradients()
        got, took = _interrupted(model, x)
        assert took > 0.03, "the signal came after the backward: a bigger model is needed"
        assert got == "KeyboardInterrupt"
        got = [p.grad.numpy() for p in model.parameters()]
        for a, b in zip(got, _plain_grads(model, x)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
        model.clear_gradients()
        model(x).square().mean().backward()  # the run goes on
    assert len(open_run(tmp_path / "run").steps) >= 4  # (the interrupted one if it was done)


def test_ctrl_c_in_a_traced_backward_is_a_keyboard_interrupt():
    """Paddle gave ``OSError: (External) KeyboardInterrupt`` for one raised in a capture's
    statistics hook. Signals at a third and at two thirds of the hooked backward (timed on the
    steps before, after the first capture's one-time set-up)."""
    model, x = _model(), paddle.randn([64, 1024])
    with trace(model, stats=True):
        for _ in range(2):
            loss = model(x).square().mean()
            start = time.perf_counter()
            loss.backward()
            took = time.perf_counter() - start
            model.clear_gradients()
        got = []
        for part in (1 / 3, 2 / 3):
            loss = model(x).square().mean()
            threading.Timer(part * took, os.kill, (os.getpid(), signal.SIGINT)).start()
            try:
                loss.backward()
                outcome = "returned"
            except KeyboardInterrupt:
                outcome = "KeyboardInterrupt"
            except BaseException as error:  # noqa: BLE001 (what reaches the user is the point)
                outcome = type(error).__name__
            try:
                time.sleep(0.2)
            except KeyboardInterrupt:
                outcome += ", then KeyboardInterrupt"  # (the signal came after the backward)
            got.append(outcome)
            model.clear_gradients()
    assert got == ["KeyboardInterrupt"] * 2
