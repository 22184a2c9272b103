"""notebooks/debugging.ipynb runs, and diagnoses the four bugs it plants: the NaN its `log`
makes in the forward, the detached gate, the unused layer and the exploding gradients; and
once they are fixed, has nothing left to say. The oracle is what the notebook planted and
Paddle's own account (its NaN checker, the parameters' .grad), not the widget's code."""

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
    loss, widget, broken, message, after_log, largest, fixed, _ = displayed_values(
        NOTEBOOK, namespace
    )
    assert math.isnan(loss)
    assert type(widget).__name__ == "GraphWidget"

    # Bug 1: the forward's log(0). No gradient was finite, so no GradNode "made" it.
    assert broken[0].kind == "nonfinite"
    assert "already NaN/Inf when the backward started" in broken[0].reason
    assert "op=log" in message  # Paddle's own checker names the forward op
    assert paddle.get_flags("FLAGS_check_nan_inf")["FLAGS_check_nan_inf"] is False
    # Bugs 2 and 3: the detached gate and the unused layer are not in the graph.
    assert _unreached(broken) == PLANTED_UNREACHED

    # After fix 1: finite, the same two left, and the exploding gradients on top of the list.
    assert all(p.kind != "nonfinite" for p in after_log)
    assert _unreached(after_log) == PLANTED_UNREACHED
    assert float(largest[0][2]) > 1e6 and largest[0][0] == "LogGradNode"

    # All fixed: nothing to say, and Paddle agrees: every parameter got a finite gradient.
    assert len(fixed) == 0
    model = namespace["model"]
    for name, param in model.named_parameters():
        assert param.grad is not None, name
        assert np.isfinite(param.grad.numpy()).all(), name
    assert max(float(np.abs(p.grad.numpy()).max()) for p in model.parameters()) < 1e3
