"""The ``vanishing`` rule of anomalies.py, on one step's layer norms (its words: that
module's docstring).

What the words say when the rule cannot tell two causes apart: a layer whose norm is far
under its neighbour's is either a layer learning too little, or the gradient growing by that
factor between them. The two differ by which of them is nearer the loss, which gradient norms
alone do not say; the model's order does, usually: layers are mostly registered in forward
order, so the last one (a head) takes its gradient straight from the loss. An RNN whose
recurrent weights are too large makes its head look "vanishing" against the exploded layer
before it (head 2.3, rnn 2.6e4): for the last layer the words name both causes, the exploding
one first. (The rule and its thresholds are the same for every layer: words only.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .anomaly import Anomaly, names_shown

RELEASE = 100.0  # a vanishing layer is reported again once back over RELEASE x its limit


def find_vanishing(
    step: int, norms: np.ndarray, layers: list[str], spiking: np.ndarray, was: np.ndarray,
    ratio: float, fraction: float, params_of: Callable[[int], list[str]],
) -> tuple[np.ndarray, list[Anomaly]]:  # fmt: skip
    """(layers vanishing now, the findings that start at this step). ``norms``: the layers'
    (NaN: no gradient); ``spiking``: the layers spiking now (the total last, not read);
    ``was``: the layers vanishing at the last step."""
    present = np.flatnonzero(~np.isnan(norms))
    now = np.zeros(len(norms), bool)
    if len(present) < 2:
        return now, []
    values = norms[present]
    before = np.concatenate([[np.inf], values[:-1]])  # each layer's neighbours with a
    after = np.concatenate([values[1:], [np.inf]])  # gradient, in the model's order
    reference = np.minimum(before, after)
    # A layer spiking now is no reference: the layers beside one that exploded did not
    # vanish, nor all the others under it as the largest (never more found than without)
    spiked = spiking[:-1][present]
    beside = np.concatenate([[False], spiked[:-1]]) | np.concatenate([spiked[1:], [False]])
    sharp = (reference > 0) & (values < ratio * reference) & ~beside
    top = int(np.argmax(np.where(spiked, -np.inf, values)))
    deep = values < fraction * values[top]  # a gradual fall over many layers
    limits = np.maximum(np.where(reference > 0, ratio * reference, 0), fraction * values[top])
    under = (values > 0) & (sharp | deep)  # 0: idle
    held = was[present]
    # reported once, then held until back over RELEASE x its limit: a norm hovering
    # at the limit (a deep sigmoid stack's middle layers) is one finding, not one a step
    now[present] = under | (held & (values > 0) & (values < RELEASE * limits))
    found = []
    for k in np.flatnonzero(under & ~held):
        j, ref = present[k], float(reference[k])
        layer = layers[j] or "(model)"
        if sharp[k]:
            side = k - 1 if before[k] <= after[k] else k + 1  # the neighbour measured against
            other, by = layers[present[side]] or "(model)", ref
            limit, why = ratio * ref, f"under {ratio:g}x its neighbour {other}'s ({ref:.3g})"
        else:
            other, by = layers[present[top]] or "(model)", float(values[top])
            limit = fraction * by
            why = f"under {fraction:g}x the largest layer norm ({other}: {by:.3g})"
        also = ""
        if k == len(values) - 1:  # the last layer: usually the one nearest the loss
            also = (f". Or exploding gradients: {layer} is the model's last layer, so if the "
                    "layers are in forward order its gradient comes from the loss and grows "
                    f"{by / float(values[k]):.3g}x on its way back into {other}")  # fmt: skip
        found.append(Anomaly(
            step, "vanishing", layers[j], params_of(j), float(norms[j]), limit,
            f"step {step}: vanishing gradient in layer {layer}: norm {norms[j]:.3g}, {why}; "
            f"parameters {names_shown(params_of(j))}{also}",
        ))  # fmt: skip
    return now, found
