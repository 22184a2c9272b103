"""Ctrl-C while a big model's gradients are read by two threads (runs/read_halves.py): the
KeyboardInterrupt reached the user's code while the helper thread was still reading that
step's gradients, which a handler may free at once (p.clear_gradient(False)).
It now comes once the helper's half is read, and the step is recorded whole before it
(tracer/capture/sigint_gate.py); the run goes on and reads the next steps right.
The helper is slowed (a sleep before its real read) so the signal lands while it reads.
Oracle: p.grad read by NumPy in float64 in the loop."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import paddle
import pytest

from paddleviz_widget import open_run, trace


def test_an_interrupt_comes_once_the_helper_has_read(tmp_path, monkeypatch):
    from paddleviz_widget.runs import read_halves
    from paddleviz_widget.runs.grad_kernel import kernel

    if kernel() is None:
        pytest.skip("llvmlite is not installed (the fast extra)")
    interrupt, helper_done = [False], threading.Event()
    made = read_halves.ReadHalves.__init__

    def slowed(self, read_part, n, cut, *helper):
        def part(*args):
            if threading.current_thread() is not threading.main_thread():
                time.sleep(0.5)  # the helper: still reading when the signal comes
                got = read_part(*args)
                helper_done.set()
                return got
            if interrupt[0]:  # the caller's half: Ctrl-C 50 ms into the helper's read
                interrupt[0] = False
                threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
            return read_part(*args)

        made(self, part, n, cut, *helper)

    monkeypatch.setattr(read_halves.ReadHalves, "__init__", slowed)
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(1024, 1024), paddle.nn.Linear(1024, 1024),
                                 paddle.nn.Linear(1024, 2))  # fmt: skip
    want, seen = [], []
    with trace(model, every=1000, run_dir=tmp_path / "run"):
        for step in range(5):
            interrupt[0] = step == 2
            helper_done.clear()
            try:
                model(paddle.randn([4, 1024])).square().mean().backward()
            except KeyboardInterrupt:
                seen.append(helper_done.is_set())  # what the user's handler finds
                # the step was recorded whole before the interrupt came (sigint_gate.py)
                grads = [p.grad.numpy().astype(np.float64) for p in model.parameters()]
                want.append([np.sqrt((g * g).sum()) for g in grads])
                for p in model.parameters():
                    p.clear_gradient(False)  # freed (not zeroed)
                continue
            grads = [p.grad.numpy().astype(np.float64) for p in model.parameters()]
            want.append([np.sqrt((g * g).sum()) for g in grads])
            model.clear_gradients()
    assert seen == [True]  # the interrupt came, and after the helper's read
    run = open_run(tmp_path / "run")
    assert run.meta["status"] == "finished" and len(run.steps) == 5  # the interrupted too
    np.testing.assert_allclose(run.param_stat("norm"), want, rtol=2e-6)
