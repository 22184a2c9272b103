"""Which backward roots a ``paddle.amp.GradScaler`` scaled inside ``trace()``, and by what.

``scaler.scale(loss)`` multiplies the loss by the scaler's loss scale (2**16 by default), so
every gradient the backward makes is that many times the one the optimizer applies: the
scaler divides them back in ``unscale_()`` / ``step()``, and skips a step whose scaled
gradients hold a NaN/Inf (an overflow of the scaled values, in float16), lowering the scale.
A watched run records the gradients as the optimizer applies them (divided by the scale, the
loss too); a graph says its statistics are the scaled ones. Paddle's scaler works only on
GPU/XPU/custom devices (on the CPU it warns and returns the loss as it is: nothing recorded).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

KEPT = 8  # scaled tensors remembered at once (one a step; a few for several losses)


@dataclass(frozen=True)
class LossScale:
    scale: float  # what scaler.scale() multiplied the loss, and so every gradient, by
    dynamic: bool  # the scaler lowers the scale after a NaN/Inf step (use_dynamic_loss_scaling)
    lowered_to: float  # the scale after update() if this step holds a NaN/Inf

    def handles_nonfinite(self, loss_finite: bool) -> bool:
        """Whether a NaN/Inf in this step's gradients is the scaler's to handle: an overflow of
        the scaled values, the step skipped and the scale lowered. Not when the loss itself is
        NaN/Inf, nor once the scale is down to 1 or below (then the gradients overflow, or are
        NaN, by themselves), nor with a fixed scale (it never changes)."""
        return self.dynamic and self.scale > 1.0 and loss_finite


class ScaledRoots:
    """Patches ``AmpScaler.scale`` (GradScaler's too: it calls it) through ``swap`` (the
    session's, which puts it back on exit) and remembers each tensor it scaled; ``of(roots)``
    gives the scale of a backward from one of them."""

    def __init__(self, swap: Any) -> None:
        self._made: dict[int, tuple[Any, Any]] = {}  # id(out) -> (weakref out, weakref scaler)
        self._patch(swap)

    def _patch(self, swap: Any) -> None:
        try:
            from paddle.amp.grad_scaler import AmpScaler
        except ImportError:  # a Paddle without AMP: nothing is ever scaled
            return
        made = self._made

        def make(original: Any) -> Any:
            def scale(scaler: Any, var: Any) -> Any:
                out = original(scaler, var)
                if out is not var and getattr(scaler, "_enable", False):
                    try:
                        made[id(out)] = (weakref.ref(out), weakref.ref(scaler))
                    except TypeError:  # a static-graph Value: no backward() of ours
                        return out
                    while len(made) > KEPT:
                        del made[next(iter(made))]
                return out

            scale.__doc__ = original.__doc__
            scale.__wrapped__ = original  # type: ignore[attr-defined]
            return scale

        swap(AmpScaler, "scale", make)

    def of(self, roots: list[Any]) -> LossScale | None:
        """The scale of a backward from one scaled tensor (None: not scaled, or several)."""
        if len(roots) != 1 or not self._made:
            return None
        kept = self._made.get(id(roots[0]))
        if kept is None or kept[0]() is not roots[0]:
            return None
        scaler = kept[1]()
        if scaler is None:
            return None
        try:
            raw = scaler._scale  # a tensor of shape [] (3.3) or [1] (3.0, 2.6)
            scale = float(raw.item() if hasattr(raw, "item") else raw)
            dynamic = bool(scaler._use_dynamic_loss_scaling)
            due = scaler._decr_count + 1 >= scaler._decr_every_n_nan_or_inf
            lowered = scale * float(scaler._decr_ratio) if dynamic and due else scale
        except (AttributeError, TypeError, ValueError):  # another Paddle's scaler: not read
            return None
        return LossScale(scale, dynamic, lowered)
