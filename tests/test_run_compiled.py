"""The compiled per-step calls (runs/grad_kernel.py) against NumPy: read_grads' norms, max |g|
and flags over float32/float64 arrays (empty, one element, NaN, Inf, squares that overflow),
quiet_step's layer norms bit for bit as np.bincount / np.add.reduce give them and its verdict
as the rules' cheaper tests give it, over random models."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from paddleviz_widget.runs.grad_kernel import kernel

pytestmark = pytest.mark.skipif(kernel() is None, reason="llvmlite is not installed (fast extra)")


def test_read_grads_equals_numpy_and_flags_what_numpy_must_read():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(n).astype(np.float32) for n in (16384, 256, 65536, 10, 1, 7)]
    arrays += [rng.standard_normal(5000), np.zeros(0, np.float32), np.array([1e200, 1e200])]
    arrays[1][5] = np.nan
    arrays[3][2] = -np.inf
    arrays[0][77] = -9.5  # the largest |x| is a negative value
    keep = np.zeros(1, np.float32)  # an address for the empty one
    n = len(arrays)
    addrs = np.array([a.ctypes.data if a.size else keep.ctypes.data for a in arrays], np.int64)
    addrs = np.append(addrs, 0)  # and a parameter without a gradient
    sizes = np.array([a.size for a in arrays] + [0], np.int64)
    kinds = np.array([0 if a.dtype == np.float32 else 1 for a in arrays] + [0], np.int8)
    out, flags = np.full((4, n + 1), -1.0), np.zeros(n + 1, np.int8)
    loss, value = np.array([2.5], np.float32), ctypes.c_double()
    fn = kernel()
    args = (addrs.ctypes.data, sizes.ctypes.data, kinds.ctypes.data, n + 1, out.ctypes.data)
    flagged = fn(*args, flags.ctypes.data, loss.ctypes.data, 0, ctypes.addressof(value))
    assert value.value == 2.5
    assert flagged == 3 and flags.tolist() == [0, 1, 0, 1, 0, 0, 0, 0, 1, 0]
    for i, a in enumerate(arrays):
        if flags[i]:
            assert np.isnan(out[:2, i]).all() and (out[2:, i] == 0).all()
            continue
        d = a.astype(np.float64)
        np.testing.assert_allclose(out[0, i], np.sqrt((d * d).sum()), rtol=1e-12)
        assert out[1, i] == (np.abs(a).max() if a.size else 0.0)  # the same value, exactly
        assert (out[2:, i] == 0).all()
    assert np.isnan(out[:2, n]).all() and (out[2:, n] == 0).all()  # no gradient


def _layer_norms(norm: np.ndarray, layer_of: np.ndarray, layers: int) -> np.ndarray:
    """anomalies.AnomalyFinder._all_layer_norms, as NumPy computes it."""
    squares = np.multiply(norm, norm, dtype=np.float64)
    out = np.empty(layers + 1)
    np.sqrt(np.bincount(layer_of, squares, minlength=layers), out=out[:-1])
    out[-1] = np.sqrt(np.add.reduce(squares))
    return out


def test_quiet_step_layer_norms_and_verdicts_equal_numpy():
    quiet = kernel("quiet_step")
    rng = np.random.default_rng(1)
    verdicts = set()
    for _ in range(2000):
        p = int(rng.integers(1, 129))
        layers = int(rng.integers(1, min(p, 40) + 1))
        layer_of = np.sort(np.concatenate([np.arange(layers), rng.integers(0, layers, p - layers)]))
        norm = rng.random(p) * 10.0 ** rng.integers(-6, 6, p)
        want = _layer_norms(norm, layer_of, layers)
        scratch = [np.empty(p), np.empty(layers), np.empty(layers + 1)]
        row = np.full(layers + 1, -1.0)
        at = [a.ctypes.data for a in scratch]
        base = (norm.ctypes.data, p, layer_of.ctypes.data, layers, *at)
        assert quiet(*base, 0, 10.0, 1e-3, 1e-6, row.ctypes.data) == 1  # rules off: always quiet
        np.testing.assert_array_equal(row, want)  # bit for bit
        bound = want * rng.uniform(0.05, 0.2, layers + 1)
        if rng.random() < 0.3:
            bound[rng.integers(layers + 1)] = np.nan  # a layer without a gradient in the window
        spike = np.greater(want, 10.0 * bound).any()
        vanishing = False
        if layers >= 2:
            ref, own = np.empty(layers), want[:-1]
            np.minimum(own[:-2], own[2:], out=ref[1:-1])
            ref[0], ref[-1] = own[1], own[-2]
            vanishing = np.less(own, ref * 1e-3).any()
            # or a gradual fall: a layer with a gradient under 1e-6 of the largest
            vanishing |= own[own > 0].min(initial=np.inf) < 1e-6 * own.max()
        row[:] = -1.0
        got = quiet(*base, bound.ctypes.data, 10.0, 1e-3, 1e-6, row.ctypes.data)
        assert got == (not spike and not vanishing)
        assert (row == want).all() if got else (row == -1.0).all()  # written only when quiet
        verdicts.add((got, bool(spike), bool(vanishing)))
    assert len(verdicts) >= 3  # quiet steps, spikes and vanishing layers were all seen


def test_quiet_step_declines_over_128_parameters():
    norm, layer_of = np.ones(129), np.zeros(129, np.int64)
    scratch = [np.empty(129), np.empty(1), np.empty(2)]
    row = np.zeros(2)
    at = [a.ctypes.data for a in scratch]
    quiet = kernel("quiet_step")
    assert quiet(norm.ctypes.data, 129, layer_of.ctypes.data, 1, *at, 0, 10.0, 1e-3, 1e-6,
                 row.ctypes.data) == 0  # fmt: skip


_SWITCH = """
import threading
import numpy as np, paddle
from paddleviz_widget.runs import grad_kernel
from paddleviz_widget.runs.summary import GradSummary

gate, compile_now = threading.Event(), grad_kernel._compile
grad_kernel._compile = lambda: (gate.wait(), compile_now())[1]  # done after step 0

paddle.seed(0)
model = paddle.nn.Sequential(paddle.nn.Linear(8, 16), paddle.nn.Linear(16, 2))
params = list(model.parameters())
summary = GradSummary(params)  # a fresh process: compiling starts on a helper thread
assert summary._compiled is None and grad_kernel._helper
seen = []
for step in range(2):
    loss = model(paddle.randn([4, 8])).square().mean()
    loss.backward()
    *stats, value, clean = summary.read_step(loss)
    want = [np.sqrt((p.grad.numpy().astype(np.float64) ** 2).sum()) for p in params]
    np.testing.assert_allclose(stats[0], want, rtol=1e-6)
    assert value == loss.item()
    seen.append(clean)  # False: the NumPy path (it does not say), True: the compiled call
    model.clear_gradients()
    gate.set()
    grad_kernel._helper[0].join()
print(seen)
"""


def test_a_run_reads_by_numpy_until_the_helper_thread_has_compiled():
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _SWITCH], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[False, True]"


def test_big_models_are_cut_in_halves_of_even_bytes_small_ones_not():
    from paddleviz_widget.runs.read_halves import SPLIT_FROM, cut_at

    assert cut_at([SPLIT_FROM - 1, 1]) == 2 - 1  # from SPLIT_FROM elements on
    assert cut_at([SPLIT_FROM - 2, 1]) == 0 and cut_at([4 * SPLIT_FROM]) == 0  # one: no halves
    sizes = [64, 2**20, 64, 2**21, 64, 2**20, 2**19, 64]
    k = cut_at(sizes)
    assert sum(sizes[:k]) == 2**20 + 128 + 2**21 and 0 < k < len(sizes)
