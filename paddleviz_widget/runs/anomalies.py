"""Anomalies found from each step's summary, as the step is recorded.

Rules (thresholds in DEFAULT_THRESHOLDS, settable by trace(..., thresholds={...}), kept in the
run log's run.json):

- ``nonfinite``: the loss or a gradient holds NaN/Inf, first step of each such stretch.
- ``spike``: a layer's gradient norm, or the total norm, above ``spike_factor`` times its
  median over the last ``spike_window`` finite steps and over the last ``spike_warmup`` ones
  (a real model's norms rise ~15x over its first tens of steps as it takes off from its
  first plateau: not a spike), and above ``spike_peak`` times the largest norm it had at
  any earlier step (near convergence one batch of hard examples gives 10-20x the median
  with the loss still falling, yet stays under the scale of the first steps; a real
  explosion goes past anything the run has seen), once ``spike_warmup`` steps were seen.
  Reported when it starts; again only after the norm was back under the threshold.
- ``vanishing``: a layer's gradient norm below ``vanishing_ratio`` times the smaller of its
  neighbours' (the layers before and after it, in the model's order), or below
  ``vanishing_fraction`` times the step's largest layer norm (a gradual fall over many layers,
  as through a deep stack of saturated sigmoids, each layer ~x0.25 of the next: no neighbour
  rule sees it), once ``spike_warmup`` steps were seen; reported when it starts, like a
  spike. A layer spiking at that step is neither a neighbour nor the largest. The rule, and
  its words for the model's last layer (an exploding reading too): vanishing_rule.py.

Steps with a NaN/Inf are left out of the medians and the spike and vanishing rules. A layer
going to exactly 0 for good: went_zero.py.

A layer whose gradient is exactly zero at a step is idle there: ``clear_grad()`` leaves zeros
in the gradients of a layer the next backward does not reach (a GAN's generator during the
critic's steps, an MoE expert no token went to, a head trained every k-th step); so is one
with no gradient at all (None: ``clear_grad(set_to_zero=False)``). An idle
step is left out of that layer's median (a median needs MIN_ACTIVE steps with a gradient in
the window; fewer: no spike is claimed for the layer), and an idle layer is not vanishing:
otherwise each return from idle would be a "spike" over a median of 0, and each idle step a
vanishing layer. The cheaper tests stay sound: dropping zeros only raises a median.

The rules run every step, so most steps are settled by a cheaper test that cannot change
the outcome: the medians of a full window are not taken each step, only a lower bound of
them (once the window is full, its columns are sorted every SORT_EVERY steps; d rows replaced
since then, the k-th smallest of a column is at least the (k - d)-th smallest of the sorted
copy). A norm under the threshold of that bound cannot be over the threshold of the median;
only a step where some norm is not under it takes the exact medians (np.median, as always).
The peak is in the sorted copy too (each row raised to spike_peak / spike_factor x the peak
at the sort, which only grows), so quiet_step's IR, which reads those rows, needs no change.
The vanishing rule likewise takes the exact path only when some layer is under the ratio of
its neighbours' smaller norm or the fraction of the largest. The anomalies found are the
same as the rules' words above compute directly (tests/test_run_anomalies.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .anomaly import Anomaly, names_shown, nonfinite_anomaly, skipped_anomaly
from .grad_kernel import kernel
from .params import ParamInfo
from .vanishing_rule import find_vanishing

DEFAULT_THRESHOLDS: dict[str, float] = {
    "spike_factor": 10.0,
    "spike_window": 50,
    "spike_warmup": 20,
    "spike_peak": 1.0,
    "vanishing_ratio": 1e-3,
    "vanishing_fraction": 1e-7,
}
MIN_ACTIVE = 5  # non-idle steps in the window a layer's median needs (module docstring)
SORT_EVERY = 10  # steps between sorts of a full window's columns (the medians' lower bound)
QUICK_UP_TO = 128  # parameters at most for the compiled settling of a clean step
_F64 = np.dtype(np.float64)


def thresholds_from(given: dict[str, float] | None) -> dict[str, float]:
    values = dict(DEFAULT_THRESHOLDS)
    for name, value in (given or {}).items():
        if name not in values:
            raise ValueError(f"unknown threshold {name!r}: trace(thresholds=) takes "
                             f"{', '.join(DEFAULT_THRESHOLDS)}")  # fmt: skip
        if not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"threshold {name} must be a positive number, got {value!r}")
        values[name] = float(value)
    return values


class AnomalyFinder:
    """``check(step, norm, nan, inf, loss)``: the anomalies that start at this step.

    ``compiled``: a clean step (check's ``clean``) of a model of up to 128 parameters is
    settled in one compiled call (grad_kernel.quiet_step: the same layer norms bit for bit,
    the same cheaper tests) when nothing can fire; anything else runs the NumPy rules."""

    def __init__(self, params: list[ParamInfo], layers: list[str], thresholds: dict[str, float],
                 *, compiled: bool = True):  # fmt: skip
        self.params = params
        self.layers = layers
        self.t = thresholds
        self._layer_of = np.array([layers.index(p.layer) for p in params], np.int64)
        window = int(self.t["spike_window"])
        self._history = np.full((window, len(layers) + 1), np.nan)  # layers..., total
        self._seen = 0  # finite steps in the history
        self._in_nonfinite = False
        self._in_skipped = False  # in a stretch of steps a GradScaler skips
        self._spiking = np.zeros(len(layers) + 1, bool)
        self._vanishing = np.zeros(len(layers), bool)
        # Never changed in place: the state after a step with nothing over its threshold.
        self._none_spiking, self._none_vanishing = self._spiking, self._vanishing
        # the largest norm of the rows that left the window or were in it at a sort
        self._peak = np.full(len(layers) + 1, -np.inf)
        self._of_peak = self.t["spike_peak"] / self.t["spike_factor"]
        warmup = self.t["spike_warmup"]
        self._bounds_from = min(warmup, window), max(warmup, window)  # quiet_bounds'
        self._sorted = np.empty_like(self._history)  # the window's columns sorted, at some step
        self._sorted_ok = False
        self._replaced = 0  # rows of the window written since it was sorted
        self._low = (window - 1) // 2  # the lower middle row: a median is at least it
        self._all_held = len(params) > 0 and bool(
            np.bincount(self._layer_of, minlength=len(layers)).all()
        )
        self._squares = np.empty(len(params))
        self._norms = np.empty(len(layers) + 1)
        self._reference = np.empty(len(layers))
        self._quick = None  # grad_kernel.quiet_step once compiled (a helper thread)
        self._compile = compiled and self._all_held and len(params) <= QUICK_UP_TO
        if self._compile:
            self._quick = kernel("quiet_step", wait=False)
            self._sums = np.empty(len(layers))
            # the step's norms copied here (one call) rather than their address asked for
            # (ndarray.ctypes makes a Python object each time)
            self._norm_in = np.empty(len(params))
            self._norm_at = self._norm_in.ctypes.data
            row = self._history.strides[0]
            self._at = (self._layer_of.ctypes.data, self._squares.ctypes.data,
                        self._sums.ctypes.data, self._norms.ctypes.data, row,
                        self._sorted.ctypes.data, self._history.ctypes.data)  # fmt: skip

    def layer_norms(self, norm: np.ndarray) -> np.ndarray:
        """L2 over each layer's parameters, then the total (NaN: no gradient at all)."""
        squares = np.where(np.isnan(norm), 0.0, np.asarray(norm, np.float64) ** 2)
        sums = np.bincount(self._layer_of, squares, minlength=len(self.layers))
        present = np.bincount(self._layer_of, ~np.isnan(norm), minlength=len(self.layers))
        out = np.where(present > 0, np.sqrt(sums), np.nan)
        total = np.sqrt(squares.sum()) if (~np.isnan(norm)).any() else np.nan
        return np.append(out, total)

    def check(self, step: int, norm: np.ndarray, nan: np.ndarray, inf: np.ndarray,
              loss: float | None, *, clean: bool = False,
              scale: Any = None) -> list[Anomaly]:  # fmt: skip
        """``clean``: every parameter has a gradient, all finite, no NaN/Inf (the caller
        knows it), ``norm`` contiguous float64. ``scale``: the GradScaler's (LossScale) when
        it scaled this step's loss: a NaN/Inf it handles is information, not a problem."""
        if self._quick is None and self._compile:
            self._quick = kernel("quiet_step", wait=False)
        quick = clean and self._quick is not None and (loss is None or math.isfinite(loss))
        if quick and self._quiet(norm):
            return []
        loss_bad = loss is not None and not np.isfinite(loss)
        if nan.any() or inf.any() or loss_bad:
            bad = (nan + inf) > 0
            if scale is not None and scale.handles_nonfinite(not loss_bad):
                # an overflow of the scaled gradients: the scaler skips the step and lowers
                # its scale; a stretch still NaN/Inf once the scale is down to 1 is a problem
                skipped = skipped_anomaly(step, self.params, nan, inf, bad, scale)
                found = [] if self._in_skipped else [skipped]
                self._in_skipped = True
                return found
            first = not self._in_nonfinite
            found = [self._nonfinite(step, nan, inf, bad, loss, scale)] if first else []
            self._in_nonfinite = True
            return found
        self._in_nonfinite = self._in_skipped = False
        # a gradient for each parameter, and each layer has some: layer_norms() in fewer calls
        every_layer = self._all_held and not np.isnan(np.add.reduce(norm))
        norms = self._all_layer_norms(norm) if every_layer else self.layer_norms(norm)
        found = []
        if self._seen >= self.t["spike_warmup"]:
            if self._surely_no_spike(norms):
                self._spiking = self._none_spiking
            else:
                found += self._spikes(step, norms)
            held = self._vanishing is not self._none_vanishing  # released by _vanishings
            if every_layer and not held and self._surely_no_vanishing(norms[:-1]):
                self._vanishing = self._none_vanishing
            else:
                found += self._vanishings(step, norms[:-1])
        leaving = self._history[self._seen % len(self._history)]
        np.fmax(self._peak, leaving, out=self._peak)  # NaN (no gradient, unwritten): ignored
        leaving[:] = norms
        self._seen += 1
        self._replaced += 1
        return found

    # -- the cheaper tests (module docstring) -------------------------------------------------
    def _quiet(self, norm: np.ndarray) -> bool:
        """A clean step settled by one compiled call: its layer norms into the history and
        True when no rule can fire (the state as check() leaves it then); False: nothing
        changed but maybe the sorted copy (check()'s own tests follow)."""
        if norm.dtype is not _F64 or len(norm) != len(self.params):
            return False
        bound, row = self.quiet_bounds()
        if not row:
            return False
        layer_of, squares, sums, norms = self._at[:4]
        factor, ratio, fraction = self.quiet_factors()
        at = (layer_of, len(self.layers), squares, sums, norms, bound, factor, ratio, fraction)
        np.copyto(self._norm_in, norm)
        if not self._quick(self._norm_at, len(norm), *at, row):  # type: ignore[misc]
            return False
        self.quiet_settled()
        return True

    def quiet_frame(self) -> tuple[int, ...] | None:
        """quiet_step's fixed arguments for step_ir.py's frame (layer_of, layers, squares,
        sums, norms), or None: this finder settles no step in a compiled call."""
        if not self._compile:
            return None
        layer_of, squares, sums, norms = self._at[:4]
        return layer_of, len(self.layers), squares, sums, norms

    def last_row(self) -> tuple[int, np.ndarray]:
        """(finite steps taken, the last one's layer norms and total: went_zero.py's)."""
        return self._seen, self._history[(self._seen - 1) % len(self._history)]

    def quiet_factors(self) -> tuple[float, float, float]:
        return self.t["spike_factor"], self.t["vanishing_ratio"], self.t["vanishing_fraction"]

    def quiet_bounds(self) -> tuple[int, int]:
        """(bound, row) for quiet_step this step: the address of the medians' lower bound (0:
        the rules are not on yet) and of the history row it writes; row 0: it may not settle
        this step (not compiled, or the window still filling: exact medians)."""
        if self._vanishing is not self._none_vanishing:
            return 0, 0  # a layer reported vanishing: its release is _vanishings' to decide
        if self._quick is None:
            if not self._compile:
                return 0, 0
            self._quick = kernel("quiet_step", wait=False)
            if self._quick is None:
                return 0, 0
        window = len(self._history)
        row, sorted_at, history_at = self._at[4:]
        bound = 0
        if self._seen >= self._bounds_from[0]:
            # the window still filling (exact medians), or a row about to be replaced that
            # no sort has put in the peak yet (a warm-up longer than the window)
            if self._seen < self._bounds_from[1]:
                return 0, 0
            self._sort_if_due()
            bound = sorted_at + (self._low - self._replaced) * row
        return bound, history_at + self._seen % window * row

    def quiet_settled(self) -> None:
        """The state after quiet_step settled a step (its row written): as check() leaves it."""
        self._in_nonfinite = self._in_skipped = False
        if self._seen >= self.t["spike_warmup"]:
            self._spiking, self._vanishing = self._none_spiking, self._none_vanishing
        self._seen += 1
        self._replaced += 1

    def _sort_if_due(self) -> None:
        if not self._sorted_ok or self._replaced >= min(SORT_EVERY, self._low + 1):
            np.copyto(self._sorted, self._history)
            self._sorted.sort(axis=0)  # NaN last
            # a column with steps without a gradient: its median is over fewer steps (the
            # others, _medians), which no row of the sorted copy bounds: 0, the exact rules
            self._sorted[:, np.isnan(self._sorted[-1])] = 0.0
            # the peak in the bounds: max(bound, peak x spike_peak / spike_factor) stays <=
            # the exact rule's max(median, the same of the peak now) (the peak only grows)
            np.fmax(self._peak, np.fmax.reduce(self._history, axis=0), out=self._peak)
            np.maximum(self._sorted, self._of_peak * self._peak, out=self._sorted)
            self._sorted_ok = True
            self._replaced = 0

    def _all_layer_norms(self, norm: np.ndarray) -> np.ndarray:
        """layer_norms() of a step where every parameter has a gradient, in fewer calls."""
        squares = np.multiply(norm, norm, out=self._squares, dtype=np.float64)
        out = self._norms
        sums = np.bincount(self._layer_of, squares, minlength=len(self.layers))
        np.sqrt(sums, out=out[:-1])
        out[-1] = np.sqrt(np.add.reduce(squares))
        return out.copy()

    def _surely_no_spike(self, norms: np.ndarray) -> bool:
        window = len(self._history)
        if self._seen < window:
            return False  # the window is still filling: exact medians
        self._sort_if_due()
        bound = self._sorted[self._low - self._replaced]  # <= each column's median now
        return not np.greater(norms, self.t["spike_factor"] * bound).any()  # NaN: False

    def _surely_no_vanishing(self, norms: np.ndarray) -> bool:
        """None under the ratio of its neighbours' smaller norm, nor the largest's fraction."""
        if len(norms) < 2:
            return True
        reference = self._reference
        np.minimum(norms[:-2], norms[2:], out=reference[1:-1])
        reference[0], reference[-1] = norms[1], norms[-2]
        reference *= self.t["vanishing_ratio"]
        if np.less(norms, reference).any():
            return False
        largest = self.t["vanishing_fraction"] * np.maximum.reduce(norms)
        return not (  # the second test, rarely: idle layers (0) left out
            np.minimum.reduce(norms) < largest
            and np.min(norms, where=norms > 0, initial=np.inf) < largest
        )

    # -- rules ------------------------------------------------------------------------------
    def _nonfinite(self, step: int, nan: np.ndarray, inf: np.ndarray, bad: np.ndarray,
                   loss: float | None, scale: Any = None) -> Anomaly:  # fmt: skip
        return nonfinite_anomaly(step, self.params, nan, inf, bad, loss, scale)

    def _spikes(self, step: int, norms: np.ndarray) -> list[Anomaly]:
        window = len(self._history)
        seen = self._history[: min(self._seen, window)]
        median = _medians(seen)
        # The last spike_warmup steps' median too, and the larger of the two is the
        # reference: a norm that rose over many steps (a model taking off from its first
        # plateau, an LR warm-up) is measured against where it is now, not where it was
        # half a window ago. Never lower than the window's median, so the cheaper tests
        # (a lower bound of that median) stay sound.
        recent_n = min(int(self.t["spike_warmup"]), len(seen))
        recent = _medians(self._history[(self._seen - 1 - np.arange(recent_n)) % window])
        longer = np.isnan(recent) | ~(median < recent)  # a NaN median stays: no spike
        median = np.where(longer, median, recent)
        span = np.where(longer, len(seen), recent_n)
        peak = np.fmax(self._peak, np.fmax.reduce(self._history, axis=0))  # every earlier step
        limit = self.t["spike_factor"] * np.maximum(median, self._of_peak * peak)
        over = norms > limit  # NaN compares False: no gradient, no spike
        of_peak = "" if self.t["spike_peak"] == 1 else f"{self.t['spike_peak']:g}x "
        found = []
        for j in np.flatnonzero(over & ~self._spiking):
            total = j == len(self.layers)
            layer = "" if total else self.layers[j]
            what = "total gradient norm" if total else f"gradient norm of layer {layer or '-'}"
            params = [] if total else self._params_of(j)
            times = f"{norms[j] / median[j]:.3g}x its median"  # > 0: idle steps left out
            found.append(Anomaly(
                step, "spike", layer, params, float(norms[j]), float(limit[j]),
                f"step {step}: spike in the {what}: {norms[j]:.4g}, "
                f"{times} {median[j]:.4g} over the last "
                f"{span[j]} steps (threshold {self.t['spike_factor']:g}x) and over {of_peak}"
                f"its largest earlier norm {peak[j]:.4g}"
                + (f"; parameters {names_shown(params)}" if params else ""),
            ))  # fmt: skip
        self._spiking = over
        return found

    def _vanishings(self, step: int, norms: np.ndarray) -> list[Anomaly]:
        now, found = find_vanishing(
            step, norms, self.layers, self._spiking, self._vanishing,
            self.t["vanishing_ratio"], self.t["vanishing_fraction"], self._params_of,
        )  # fmt: skip
        self._vanishing = now if now.any() else self._none_vanishing
        return found

    def _params_of(self, layer: int) -> list[str]:
        return [p.name for p, j in zip(self.params, self._layer_of) if j == layer]


def _medians(rows: np.ndarray) -> np.ndarray:
    """Each column's median over ``rows``, its idle steps (exactly zero, or no gradient at
    all: NaN) left out; NaN: fewer than MIN_ACTIVE steps with a gradient (np.median, not
    nanmedian: this runs every step; a NaN step once made a NaN median: no spike, a window)."""
    median = np.median(rows, axis=0) if len(rows) else np.full(rows.shape[1], np.nan)
    for j in np.flatnonzero(((rows == 0) | np.isnan(rows)).any(axis=0)):  # module docstring
        active = rows[:, j][(rows[:, j] != 0) & ~np.isnan(rows[:, j])]
        median[j] = np.median(active) if len(active) >= MIN_ACTIVE else np.nan
    return median
