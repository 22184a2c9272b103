"""notebooks/debugging.ipynb runs, and diagnoses the seven bugs it plants: the NaN its `log`
makes in the forward, the detached gate, the unused layer and the exploding gradients (and
once they are fixed, has nothing left to say); then a NaN born in sqrt's backward, dead
ReLUs and gradients vanishing through saturated sigmoids. The oracle is what the notebook
planted and Paddle's own account (its NaN checker, the parameters' .grad), not the widget's
code."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import paddle
from paddle_versions import requires_post_hooks

sys.path.insert(0, str(Path(__file__).resolve().parent / "browser"))
from notebook_exec import displayed_values  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "debugging.ipynb"
PLANTED_UNREACHED = {"gate.weight", "gate.bias", "spare.weight", "spare.bias"}


def _unreached(problems: list[Any]) -> set[str]:
    return {p.name for p in problems if p.kind == "unreached"}


@requires_post_hooks
def test_the_debugging_notebook_finds_each_planted_bug_and_then_none():
    namespace: dict[str, Any] = {}
    values = displayed_values(NOTEBOOK, namespace)
    loss, widget, broken, message, after_log, largest, fixed, _ = values[:8]
    nan_backward, dead, vanishing = values[8:]
    assert math.isnan(loss)
    assert type(widget).__name__ == "GraphWidget"

    # Bug 1: the forward's log(0), in the model's own forward code before it calls head.
    first = broken[0]
    assert (first.kind, first.layer, first.name) == ("nonfinite", "Regressor", "LogGradNode")
    assert "before it called head" in first.reason
    assert "op=log" in message  # Paddle's own checker agrees on the forward op
    assert paddle.get_flags("FLAGS_check_nan_inf")["FLAGS_check_nan_inf"] is False
    # Bugs 2 and 3: the detached gate and the unused layer are not in the graph.
    assert _unreached(broken) == PLANTED_UNREACHED

    # After fix 1: finite, the same two left, and the exploding head named with its factor.
    assert all(p.kind != "nonfinite" for p in after_log)
    (explode,) = [p for p in after_log if p.kind == "exploding"]
    assert explode.layer == "head" and explode.factor is not None and explode.factor > 100
    assert _unreached(after_log) == PLANTED_UNREACHED
    assert float(largest[0][2]) > 1e6 and largest[0][0] == "LogGradNode"

    # All fixed: nothing to say, and Paddle agrees: every parameter got a finite gradient.
    assert len(fixed) == 0
    model = namespace["model"]
    for name, param in model.named_parameters():
        assert param.grad is not None, name
        assert np.isfinite(param.grad.numpy()).all(), name
    assert max(float(np.abs(p.grad.numpy()).max()) for p in model.parameters()) < 1e3

    # Bug 5: sqrt's backward at the masked feature: born in the backward, in layer 2 (Gated).
    (p,) = nan_backward
    assert (p.kind, p.layer, p.name) == ("nonfinite", "2", "SqrtGradNode")
    assert "made here from finite ones" in p.reason

    # Bug 6: the zeros start at the ReLU after the dead layer; the rest are affected, and
    # they are exactly the parameters Paddle gave all-zero gradients.
    (p,) = dead
    assert (p.kind, p.layer, p.name) == ("zero", "3", "ReluGradNode")
    deep = namespace["deep"]
    zero = {n for n, q in deep.named_parameters() if not np.abs(q.grad.numpy()).any()}
    assert set(p.affected) == zero and "2.bias" in zero

    # Bug 7: the first sigmoid saturates; the layers before it get < 1e-4 of the last's.
    (p,) = vanishing
    assert (p.kind, p.layer, p.name) == ("vanishing", "1", "SigmoidGradNode")
    saturated = namespace["saturated"]
    first, last = (np.linalg.norm(saturated[k].weight.grad.numpy()) for k in (0, 22))
    assert first < 1e-4 * last and "0" in p.affected
