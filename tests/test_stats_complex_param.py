"""trace(stats=True) of a model with a complex parameter: complex gradients get no statistics
(float ones only, and the edge says why), but the parameter was also called "no gradient
reached it in this backward" (a `none` problem, the ∅ grad badge) though its gradient came.
Oracle: p.grad after the backward, non-zero."""

from __future__ import annotations

import numpy as np
import paddle
from paddle_versions import requires_post_hooks
from test_run_complex_param import Spectral

from paddleviz_widget import GraphWidget, trace

pytestmark = requires_post_hooks


def test_a_complex_parameter_s_gradient_is_not_called_missing():
    model = Spectral()
    with trace(model, stats=True):
        loss = model(paddle.to_tensor(np.arange(1, 7).astype(np.complex64) * (1 + 2j)))
        loss.backward()
    assert np.abs(model.filter.grad.numpy()).max() > 0  # its gradient came
    widget = GraphWidget(loss)
    status = {n["param"]["name"]: n.get("grad_status") for n in widget.graph["nodes"]
              if n.get("kind") == "param"}  # fmt: skip
    assert status == {"filter": None, "scale": None}  # filter was "none"
    assert not [p for p in widget.problems() if p.kind == "none"]
