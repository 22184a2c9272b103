"""One problem found in a run's gradient summaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..visible_text import visible_text

KINDS = ("nonfinite", "spike", "vanishing", "skipped")
# For information, not problems: a step a GradScaler skipped (an overflow of the scaled
# gradients, which it handles); open_run(...).problems() leaves them out, .anomalies has all.
INFORMATION = ("skipped",)


@dataclass(frozen=True)
class Anomaly:
    step: int
    kind: str  # one of KINDS
    layer: str  # layer path; "" for the whole model (total norm, the loss)
    params: list[str] = field(default_factory=list)
    value: float = float("nan")  # what was seen (a norm, a ratio, a count)
    threshold: float = float("nan")  # what it was compared with
    message: str = ""  # the words problems() shows

    def __str__(self) -> str:
        # Names from user code: controls and bidi overrides escaped (the file keeps them).
        return visible_text(self.message)

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "kind": self.kind, "layer": self.layer,
                "params": list(self.params), "value": _num(self.value),
                "threshold": _num(self.threshold), "message": self.message}  # fmt: skip

    @staticmethod
    def from_json(value: dict[str, Any]) -> Anomaly:
        return Anomaly(
            int(value["step"]), str(value["kind"]), str(value.get("layer", "")),
            [str(p) for p in value.get("params", [])], _float(value.get("value")),
            _float(value.get("threshold")), str(value.get("message", "")),
        )  # fmt: skip


def _num(x: float) -> float | None | str:
    if x != x:
        return None
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return x


def _float(x: Any) -> float:
    return float("nan") if x is None else float(x)


def names_shown(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def nonfinite_anomaly(step: int, params: list[Any], nan: np.ndarray, inf: np.ndarray,
                      bad: np.ndarray, loss: float | None,
                      scale: Any = None) -> Anomaly:  # fmt: skip
    """The ``nonfinite`` anomaly of a step: which parameters (ParamInfo), how many NaN/Inf;
    ``scale``: the GradScaler's (loss_scaling.LossScale) that scaled this step's loss."""
    which = [params[i] for i in np.flatnonzero(bad)]
    names = [p.name for p in which]
    counts = [f"{p.name} ({_counts(nan[i], inf[i])})" for p, i in
              zip(which, np.flatnonzero(bad))]  # fmt: skip
    layers = list(dict.fromkeys(p.layer for p in which))
    parts = []
    loss_bad = loss is not None and not np.isfinite(loss)
    if loss_bad:
        # every gradient comes from the loss: none says where the NaN/Inf began, and the
        # first layer listed is no culprit (layer "": the whole model, as for the loss)
        parts.append(f"the loss is {loss}: it began in the forward, and every gradient the "
                     "backward makes from it is NaN/Inf, none saying where (a full capture of "
                     "the step names the layer and op: run.graph(step))")  # fmt: skip
    if names:
        shown = [layer or "(model)" for layer in layers]
        where = f"layer{'s' if len(shown) > 1 else ''} {names_shown(shown, 3)}"
        # the count before the layers: "in layers 0, 1, 3 parameters" read as layer 3
        parts.append(f"NaN/Inf gradients in {len(names)} parameter"
                     f"{'s' if len(names) > 1 else ''} of {where}: "
                     f"{names_shown(counts)}")  # fmt: skip
    if scale is not None and names and (loss is None or np.isfinite(loss)):
        why = ": not an overflow of the loss scaling" if scale.dynamic else ""
        parts.append(f"under a GradScaler whose loss scale is {scale.scale:g}{why}")
    return Anomaly(
        step, "nonfinite", layers[0] if layers and not loss_bad else "", names,
        float(np.nansum(nan) + np.nansum(inf)), 0.0,
        f"step {step}: first non-finite step: " + "; ".join(parts),
    )  # fmt: skip


def skipped_anomaly(step: int, params: list[Any], nan: np.ndarray, inf: np.ndarray,
                    bad: np.ndarray, scale: Any) -> Anomaly:  # fmt: skip
    """A step whose scaled gradients overflowed under a GradScaler's dynamic loss scaling:
    the scaler skips it (no update) and lowers its scale (``scale``: loss_scaling.LossScale).
    Said once per stretch of such steps; still NaN/Inf once the scale is down to 1: nonfinite."""
    index = np.flatnonzero(bad)
    counts = [f"{params[i].name} ({_counts(nan[i], inf[i])})" for i in index]
    lowered = f"lowers its loss scale {scale.scale:g} to {scale.lowered_to:g}"
    if scale.lowered_to == scale.scale:
        lowered = f"keeps its loss scale {scale.scale:g}"
    n = len(index)
    return Anomaly(
        step, "skipped", params[index[0]].layer if n else "", [params[i].name for i in index],
        float(np.nansum(nan) + np.nansum(inf)), 0.0,
        f"step {step}: for information: the GradScaler skips this step and {lowered}: NaN/Inf "
        f"in the scaled gradients of {n} parameter{'s' if n != 1 else ''}: "
        f"{names_shown(counts)}. An overflow of the loss scaling (the loss is finite), which "
        "the scaler handles; said again only if it comes back after a finite step, and a "
        "problem (nonfinite) if it lasts until the scale is down to 1",
    )  # fmt: skip


def _counts(nan: Any, inf: Any) -> str:
    parts = []
    if nan:
        parts.append(f"{int(nan)} NaN")
    if inf:
        parts.append(f"{int(inf)} Inf")
    return ", ".join(parts)
