"""A clean watched step in one compiled call (runs/clean_step.py, step_ir.py's watch_step):
its outputs against the calls it replaces (read_grads, NumPy's float32 assignment, quiet_step),
and real runs written with it and without it (the three-call path): the same tail bytes,
parts, digests and anomalies, with NaN steps, a parameter without a gradient, a spike and a
NaN loss among the steps."""

from __future__ import annotations

import shutil

import numpy as np
import paddle
import pytest
from run_models import TinyMLP, train

from paddleviz_widget import trace
from paddleviz_widget.runs import clean_step
from paddleviz_widget.runs.grad_kernel import kernel

pytestmark = pytest.mark.skipif(kernel() is None, reason="llvmlite is not installed (fast extra)")


def _frame(arrays, out, flags, loss_out, rows32, counts, plane, quiet):
    n = len(arrays)
    addrs = np.array([a.ctypes.data if a is not None else 0 for a in arrays], np.int64)
    sizes = np.array([a.size if a is not None else 0 for a in arrays], np.int64)
    kinds = np.array([0 if a is None or a.dtype == np.float32 else 1 for a in arrays], np.int8)
    frame = np.zeros(19, np.int64)
    frame[18] = n  # read_upto's stop: every gradient read in the call
    frame[:7] = [addrs.ctypes.data, sizes.ctypes.data, kinds.ctypes.data, n, out.ctypes.data,
                 flags.ctypes.data, loss_out.ctypes.data]  # fmt: skip
    frame[7:10] = [rows32.ctypes.data, counts.ctypes.data, plane]
    frame[11:16] = [a.ctypes.data if isinstance(a, np.ndarray) else a for a in quiet[:5]]
    frame[16:18].view(np.float64)[:] = quiet[5:7]
    frame[10:11].view(np.float64)[:] = quiet[7:]  # the vanishing fraction
    return frame, (addrs, sizes, kinds)


def test_watch_step_equals_read_grads_the_float32_rows_and_quiet_step():
    read, quiet, step = kernel(), kernel("quiet_step"), kernel("watch_step")
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(400):
        n = int(rng.integers(1, 12))
        arrays = [(rng.standard_normal(int(rng.integers(0, 3000))) * 10.0 ** rng.uniform(-30, 30))
                  .astype(np.float32 if rng.random() < 0.8 else np.float64)
                  for _ in range(n)]  # fmt: skip
        if rng.random() < 0.2:
            arrays[int(rng.integers(n))][:1] = np.nan
        if rng.random() < 0.1:
            arrays[int(rng.integers(n))] = None  # no gradient this step
        layers = int(rng.integers(1, n + 1))
        layer_of = np.sort(np.concatenate([np.arange(layers), rng.integers(0, layers, n - layers)]))
        loss = np.array([rng.choice([1.5, np.nan, np.inf])], np.float32)
        plane, slot = 5, int(rng.integers(0, 5))
        # the three calls: read_grads, the writer's float32 assignment, quiet_step
        out, flags, lv = np.zeros((4, n)), np.zeros(n, np.int8), np.zeros(1)
        _, (addrs, sizes, kinds) = _frame(arrays, out, flags, lv, out, out, 0, [0] * 5 + [0, 0, 0])
        bad = read(addrs.ctypes.data, sizes.ctypes.data, kinds.ctypes.data, n, out.ctypes.data,
                   flags.ctypes.data, loss.ctypes.data, 0, lv.ctypes.data)  # fmt: skip
        want32 = np.full((2, plane, n), -1, np.float32)
        want32[0, slot], want32[1, slot] = out[0], out[1]
        scratch = [np.empty(n), np.empty(layers), np.empty(layers + 1)]
        bound = np.full(layers + 1, rng.uniform(0, 2) if rng.random() < 0.5 else np.inf)
        use_bound, wanted = rng.random() < 0.7, rng.random() < 0.9
        want_row = np.full(layers + 1, -7.0)
        clean = not bad and all(a is not None for a in arrays) and np.isfinite(loss[0])
        settled = 0
        if clean and wanted:
            settled = quiet(out.ctypes.data, n, layer_of.ctypes.data, layers,
                            *[s.ctypes.data for s in scratch],
                            bound.ctypes.data if use_bound else 0, 10.0, 1e-3, 1e-6,
                            want_row.ctypes.data)  # fmt: skip
        # the one call
        got_out, got_flags, got_lv = np.zeros((4, n)), np.zeros(n, np.int8), np.zeros(1)
        rows32, counts = np.full((2, plane, n), -1, np.float32), np.full((2, plane, n), -1.0)
        scratch2 = [np.empty(n), np.empty(layers), np.empty(layers + 1)]
        quiet_at = [layer_of, layers, *scratch2, 10.0, 1e-3, 1e-6]
        frame, keep = _frame(arrays, got_out, got_flags, got_lv, rows32, counts, plane, quiet_at)
        row = np.full(layers + 1, -7.0)
        limits = (bound.ctypes.data if use_bound else 0, row.ctypes.data if wanted else 0)
        got = step(frame.ctypes.data, loss.ctypes.data, 0, slot, *limits)
        assert got == (settled << 32 if settled else bad)
        np.testing.assert_array_equal(got_out, out)
        np.testing.assert_array_equal(got_flags, flags)
        np.testing.assert_array_equal(got_lv, lv)
        np.testing.assert_array_equal(rows32, want32)  # as NumPy's assignment rounds
        assert (counts[:, slot] == out[2:]).all()
        np.testing.assert_array_equal(row, want_row)  # written only when settled
        seen.add((bool(bad), clean, settled))
    assert len(seen) >= 4  # flagged, unclean, settled and unsettled clean steps were all seen


def _run(tmp_path, name, one_call: bool):
    paddle.seed(0)
    model = TinyMLP()
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    path = tmp_path / name

    def before(step, x):
        if step == 137:
            x[0, 0] = float("nan")
        if step == 300:
            opt.set_lr(1.0)  # spikes
        if step in (210, 211):  # a parameter without a gradient at step 210
            model.fc1.bias.stop_gradient = step == 210
            if step == 210:
                model.fc1.bias.clear_gradient(False)

    def after(step, loss):
        if step == 399:
            shutil.copy(path / "tail.jsonl", tmp_path / f"{name}-tail.jsonl")
        return step != 137

    original = clean_step.CleanStep.run
    if not one_call:
        clean_step.CleanStep.run = lambda self, step, loss: None  # type: ignore[method-assign]
    try:
        with trace(model, stats=True, every=1000, run_dir=path):
            train(model, opt, 400, before=before, after_backward=after)
    finally:
        clean_step.CleanStep.run = original  # type: ignore[method-assign]
    return path


def test_runs_with_and_without_the_one_call_write_the_same_files(tmp_path, monkeypatch):
    settled = []
    original = clean_step.CleanStep.run

    def counted(self, step, loss):
        got = original(self, step, loss)
        settled.append(got is True)
        return got

    monkeypatch.setattr(clean_step.CleanStep, "run", counted)
    one = _run(tmp_path, "one", one_call=True)
    monkeypatch.setattr(clean_step.CleanStep, "run", original)
    three = _run(tmp_path, "three", one_call=False)
    assert sum(settled) > 300 and not all(settled)  # most steps settled in one call, not all
    tails = [(tmp_path / f"{n}-tail.jsonl").read_bytes() for n in ("one", "three")]
    assert tails[0] == tails[1] and tails[0].count(b"\n") == 399  # step 0: its own part
    lines = tails[0].split(b"\n")  # from step 1
    assert b"null" in lines[209] and b'"nan":[0,' not in lines[136]  # no gradient; NaN
    for rel in ("anomalies.jsonl", "digests/all.parquet"):
        assert (one / rel).read_bytes() == (three / rel).read_bytes(), rel
    parts = sorted(p.name for p in (one / "steps").iterdir())
    assert parts == sorted(p.name for p in (three / "steps").iterdir()) and parts
    for part in parts:
        assert (one / "steps" / part).read_bytes() == (three / "steps" / part).read_bytes()
    assert b"spike" in (one / "anomalies.jsonl").read_bytes()
