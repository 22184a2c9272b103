"""BatchNorm over a few values per channel (a batch of 1-2 at a small spatial size: ResNet at
32x32 reaches 1x1): the batch's statistics of 2 values have a variance near zero, which
divides the gradient (ResNet-18, batch 2 at 32x32: a total parameter gradient of 2.3e5
against ~100 at 64x64, p.grad alike); over 1 value Paddle sends its weight and bias zero
gradients. Real gradients, not a fault of the weights: the exploding and zero findings of
such a graph say so, and what avoids it."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .exploding import NORM_CAUSE, WEIGHTS_GUESS
from .flow import Flow
from .problem import Problem
from .zeros import ZERO_REASON

FEW_VALUES = 4  # values per channel at or below which a batch statistic means little


@dataclass(frozen=True)
class FewValues:
    node: str
    layer: str
    values: int  # values per channel the statistics were taken over
    shape: tuple[int, ...]  # the normalised input's shape


def few_value_norms(flow: Flow) -> list[FewValues]:
    """The batch normalisations of the graph that normalised over few values per channel,
    read from the shapes of the gradients they sent (their input's, their weight's)."""
    found = []
    for n in flow.graph.nodes:
        if n.kind != "op" or "BatchNorm" not in n.name:
            continue
        shapes = [e.grad.shape for e in flow.node_out.get(n.id, []) if e.grad and e.grad.shape]
        x = max(shapes, key=len, default=None)
        if x is None or len(x) < 2:
            continue
        channels = next((s[0] for s in shapes if len(s) == 1), x[1])  # NHWC: the weight's
        values = math.prod(x) // channels if channels else 0
        if 0 < values <= FEW_VALUES:
            found.append(FewValues(n.id, flow.layer_of(n.id) or n.name, values, x))
    return found


def _note(few: list[FewValues], kind: str) -> str:
    values = " or ".join(map(str, sorted({f.values for f in few})))
    names = ", ".join(f.layer for f in few[:3])
    if len(few) > 3:
        names += f" and {len(few) - 3} more"
    who = "its BatchNorm normalises" if len(few) == 1 else f"{len(few)} BatchNorm layers normalise"
    effect = (
        "have a variance near zero, which divides the gradient"
        if kind == "exploding"
        else "leave the layer's weight and bias nothing to learn from"
    )
    return (
        f"{who} over only {values} value{'s' if values != '1' else ''} per channel ({names}; "
        f"input {list(few[0].shape)}): batch statistics of so few values {effect}. Real "
        "gradients of this batch, not a fault of the weights; a larger batch or input, "
        "GroupNorm, or BatchNorm in eval mode avoids it"
    )


def _concerning(p: Problem, few: list[FewValues], flow: Flow) -> list[FewValues]:
    """The few-value BatchNorms behind a finding: every one for the total norm, those inside
    an exploding layer, the one that sent a parameter its zeros (or where they start)."""
    if p.kind == "exploding":
        if p.node is None and p.layer is None:  # the total norm; a layer with no op named
            return few  # has its layer, and only the BatchNorms inside it are behind it
        return [f for f in few if f.node == p.node or (p.layer and (
            f.layer == p.layer or f.layer.startswith(p.layer + ".")))]  # fmt: skip
    if p.kind == "zero" and p.node is not None:
        senders = {p.node} | {e.source for e in flow.node_in.get(p.node, [])}
        return [f for f in few if f.node in senders]
    return []


def explain_few_values(problems: list[Problem], flow: Flow) -> list[Problem]:
    """Each exploding or zero finding a few-value BatchNorm explains, with its reason said
    (a zero parameter's "dead ReLUs?" guess replaced)."""
    few = few_value_norms(flow)
    if not few:
        return problems
    out = []
    for p in problems:
        behind = _concerning(p, few, flow)
        if not behind:
            out.append(p)
        elif p.reason == ZERO_REASON:
            out.append(replace(p, reason=f"its gradient is all zeros: {_note(behind, p.kind)}"))
        elif WEIGHTS_GUESS in p.reason:  # the note says it is not the weights: no guess left
            reason = p.reason.replace(WEIGHTS_GUESS, NORM_CAUSE)
            out.append(replace(p, reason=f"{reason}; {_note(behind, p.kind)}"))
        else:
            out.append(replace(p, reason=f"{p.reason}; {_note(behind, p.kind)}"))
    return out
