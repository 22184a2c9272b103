"""The anomaly rules' cheaper per-step tests (runs/anomalies.py) find exactly what the rules
computed directly find: the same anomalies at the same steps, in series with spikes, norms
near the threshold, vanishing layers, NaN steps and parameters without a gradient."""

from __future__ import annotations

import numpy as np
import pytest

from paddleviz_widget.runs.anomalies import SORT_EVERY, AnomalyFinder, thresholds_from
from paddleviz_widget.runs.grad_kernel import kernel
from paddleviz_widget.runs.params import ParamInfo


class DirectFinder(AnomalyFinder):
    """The rules as written: exact medians and the neighbour test every step."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._all_held = False  # layer_norms() itself

    def _surely_no_spike(self, norms):
        return False

    def _surely_no_vanishing(self, norms):
        return False


def _model(layers: int, per_layer: int = 2) -> tuple[list[ParamInfo], list[str]]:
    names = [f"l{k}" for k in range(layers)]
    params = [ParamInfo(f"l{k}.p{j}", f"l{k}", (3,), "float32") for k in range(layers)
              for j in range(per_layer)]  # fmt: skip
    return params, names


def _series(seed: int, steps: int, n: int, layers: int) -> list[tuple[np.ndarray, ...]]:
    """(norm, nan, inf) per step: drifting log-normal norms with spikes (some just around the
    10x threshold), vanishing layers, NaN steps and parameters left without a gradient."""
    rng = np.random.default_rng(seed)
    base = np.exp(rng.normal(0, 1, n))
    out = []
    for step in range(steps):
        norm = base * np.exp(rng.normal(0, 0.3, n) + 0.002 * step)
        nan, inf = np.zeros(n), np.zeros(n)
        roll = rng.random()
        if roll < 0.05:  # a spike in one layer, anywhere from 5x to 40x
            k = rng.integers(layers)
            norm[2 * k : 2 * k + 2] *= rng.uniform(5, 40)
        elif roll < 0.08:  # everything jumps (the total norm spikes)
            norm *= rng.uniform(8, 15)
        elif roll < 0.10:  # a layer vanishes against its neighbours
            norm[2 * rng.integers(layers) :][:2] *= 1e-5
        elif roll < 0.12:
            nan[rng.integers(n)] = 3
        elif roll < 0.13:
            inf[rng.integers(n)] = 1
        elif roll < 0.16:  # a parameter without a gradient this step
            norm[rng.integers(n)] = np.nan
        out.append((norm, nan, inf))
    return out


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("window,warmup", [(50, 20), (7, 7), (2, 2), (7, 20)])
def test_cheaper_tests_find_what_the_direct_rules_find(seed, window, warmup, compiled):
    """compiled: clean steps settled by grad_kernel.quiet_step (its history rows the same
    bits as NumPy's). A warm-up longer than the window: rows leave it before any sort has
    put them in the spikes' peak."""
    if compiled and kernel("quiet_step") is None:
        pytest.skip("llvmlite is not installed (the fast extra)")
    layers = 5 + seed
    params, names = _model(layers)
    thresholds = thresholds_from({"spike_window": window, "spike_warmup": warmup})
    fast = AnomalyFinder(params, names, thresholds, compiled=compiled)
    direct = DirectFinder(params, names, thresholds, compiled=False)
    assert (fast._quick is not None) == compiled
    found = []
    for step, (norm, nan, inf) in enumerate(_series(seed, 700, len(params), layers)):
        loss = float("nan") if step == 400 else 1.0
        clean = not (nan.any() or inf.any() or np.isnan(norm).any())
        got = fast.check(step, norm.copy(), nan, inf, loss, clean=clean)
        want = direct.check(step, norm.copy(), nan, inf, loss)
        assert got == want, f"step {step}"
        found += got
    np.testing.assert_array_equal(fast._history, direct._history)  # bit for bit, NaN too
    kinds = {a.kind for a in found}
    assert kinds == {"spike", "vanishing", "nonfinite"}, kinds  # the series tests each rule
    assert len([a for a in found if a.kind == "spike"]) > 10


def test_spike_at_step_n_is_found_at_n_between_sorts_of_the_window():
    params, names = _model(4)
    thresholds = thresholds_from(None)
    for spike_at in range(120, 120 + SORT_EVERY + 1):  # every offset from the last sort
        finder = AnomalyFinder(params, names, thresholds)
        found = []
        for step in range(spike_at + 3):
            norm = np.full(len(params), 1.0) * (1 + 0.01 * (step % 5))
            if step == spike_at:
                norm[4:6] *= 11  # layer l2 only, 11x: just over the 10x threshold
            zero = np.zeros(len(params))
            found += finder.check(step, norm, zero, zero, 0.5, clean=True)
        assert [(a.step, a.kind, a.layer) for a in found] == [(spike_at, "spike", "l2")]
        assert found[0].params == ["l2.p0", "l2.p1"]


@pytest.mark.parametrize("compiled", [False, True])
def test_a_spike_must_also_go_past_the_largest_earlier_norm(compiled):
    """Norms of 30 in the first 5 steps, then ~1: 15x at step 100 stays under that peak (a
    hard batch near convergence), 40x at step 150 goes past it (a spike); spike_peak set
    near 0: the median alone, both."""
    if compiled and kernel("quiet_step") is None:
        pytest.skip("llvmlite is not installed (the fast extra)")
    params, names = _model(3)
    zero = np.zeros(len(params))
    old = [(100, "l1"), (150, "l1"), (150, "")]  # the total too: 23x its median, < its peak
    for given, want in [(None, [(150, "l1")]), ({"spike_peak": 1e-9}, old)]:
        finder = AnomalyFinder(params, names, thresholds_from(given), compiled=compiled)
        found = []
        for step in range(200):
            norm = np.full(len(params), 30.0 if step < 5 else 1.0 + 0.01 * (step % 7))
            norm[2:4] *= {100: 15, 150: 40}.get(step, 1)
            found += finder.check(step, norm, zero, zero, 0.5, clean=True)
        assert [(a.step, a.layer) for a in found] == want
        peak = "" if given is None else "1e-09x "
        assert (
            f"and over {peak}its largest earlier norm 42.43" in found[-2 if given else -1].message
        )


@pytest.mark.parametrize("compiled", [False, True])
def test_a_layer_back_from_idle_is_no_spike_and_an_idle_layer_no_vanishing(compiled, capfd):
    """The rules on a series made by hand: layer l1 idle for 59 steps then a gradient (no
    median to compare with: nothing); l1 idle between busy neighbours (not vanishing); then
    busy at every third step with a 15x jump at step 150 (a spike, against the median of its
    busy steps); no NumPy warning on stderr."""
    if compiled and kernel("quiet_step") is None:
        pytest.skip("llvmlite is not installed (the fast extra)")
    import warnings

    params, names = _model(3)
    finder = AnomalyFinder(params, names, thresholds_from(None), compiled=compiled)
    found = []
    zero = np.zeros(len(params))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any NumPy RuntimeWarning fails the test
        for step in range(160):
            norm = np.full(len(params), 1.0) * (1 + 0.01 * (step % 7))
            busy = step == 59 or (step > 59 and step % 3 == 0)
            norm[2:4] = (0.5 * (15 if step == 150 else 1)) if busy else 0.0
            found += finder.check(step, norm, zero, zero, 0.5, clean=True)
    assert [(a.step, a.kind, a.layer) for a in found] == [(150, "spike", "l1")]
    assert "15x its median 0.7071" in found[0].message, found[0].message
    assert capfd.readouterr().err == ""
