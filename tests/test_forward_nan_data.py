"""A NaN/Inf in the data (the model's input) is said to come with the data, not pinned on the
model's own code. The check of the first non-finite layer output (trace(model, stats=True),
tracer/capture/forward_finite.py) saw the first layer's input non-finite and blamed the code
of its caller, the model, "before it called fc1", whenever the model has sublayers (all real
models): problems() then named an op of the model that ran after fc1. Real Paddle models; the
expected culprit is where the test put the NaN. Both reads: the CPU one, and the device-side
flags (a tensor NumPy cannot read: half types on a CPU, any tensor on a GPU).
"""

from __future__ import annotations

from typing import Any

import paddle
import pytest
from paddle import nn
from paddle_versions import requires_post_hooks

from paddleviz_widget import GraphWidget, build_graph, trace
from paddleviz_widget.tracer.capture import forward_finite

pytestmark = requires_post_hooks  # the forward check is trace(stats=True)'s (Paddle >= 3.0)

DATA = "the model's input already held a NaN/Inf: it came with the data"


class Net(nn.Layer):
    def __init__(self, log_first: bool = False) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)
        self.log_first = log_first

    def forward(self, x: Any) -> Any:
        if self.log_first:  # the model's own code makes the NaN (log of negatives)
            x = paddle.log(x - 10.0)
        return self.fc2(nn.functional.sigmoid(self.fc1(x)))


def _sequential() -> nn.Layer:
    return nn.Sequential(nn.Linear(3, 4), nn.Sigmoid(), nn.Linear(4, 2))


@pytest.fixture(params=["cpu-read", "device-flags"])
def read(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "device-flags":  # as for a tensor NumPy cannot read
        monkeypatch.setattr(forward_finite, "cpu_finite", lambda t, dtype=None: None)
    return request.param


def _problems(model: nn.Layer, nan_in_data: bool) -> tuple[dict[str, Any], list[Any]]:
    paddle.seed(0)
    x = paddle.randn([2, 3])
    if nan_in_data:
        x[0, 0] = float("nan")
    with trace(model, stats=True):
        loss = model(x).mean()
        loss.backward()
    return build_graph(loss)["meta"], GraphWidget(loss).problems()


@pytest.mark.parametrize("make", [Net, _sequential], ids=["own-forward", "sequential"])
def test_a_nan_in_the_data_is_said_to_come_with_it(read: str, make: Any) -> None:
    model = make()
    meta, problems = _problems(model, nan_in_data=True)
    culprit = meta["forward_nonfinite"]
    assert culprit["inputs_finite"] is False and "before" not in culprit
    assert culprit["layer_type"] == type(model).__name__
    (problem,) = [p for p in problems if p.kind == "nonfinite"]
    assert problem.reason.startswith(DATA), problem.reason
    assert problem.node is None  # no op of the model is named


def test_a_nan_the_models_own_code_makes_is_still_its_own(read: str) -> None:
    meta, problems = _problems(Net(log_first=True), nan_in_data=False)
    culprit = meta["forward_nonfinite"]
    assert culprit["inputs_finite"] is True and culprit["before"] == "fc1"
    (problem,) = [p for p in problems if p.kind == "nonfinite"]
    assert "made by this Net's own code, before it called fc1" in problem.reason
    assert not problem.reason.startswith(DATA)


class AddMask(nn.Layer):
    def forward(self, h: Any, mask: Any) -> Any:
        return h + mask


class Masked(nn.Layer):
    """Takes an additive mask (0 / -inf) as the model's second argument, as attention does."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.add_mask = AddMask()

    def forward(self, x: Any, mask: Any) -> Any:
        h = paddle.log(self.fc.weight.sum() * 0 + x - 10.0)  # the model's own code: NaN
        return self.add_mask(h, mask)


def test_a_minus_inf_mask_argument_does_not_make_the_models_nan_the_datas(read: str) -> None:
    paddle.seed(0)
    model = Masked()
    x = paddle.randn([2, 3])
    mask = paddle.to_tensor([[0.0, float("-inf"), 0.0]] * 2)
    with trace(model, stats=True):
        loss = model(x, mask).mean()
        loss.backward()
    culprit = build_graph(loss)["meta"]["forward_nonfinite"]  # (no gradient is NaN here)
    assert culprit["layer_type"] == "Masked" and culprit["inputs_finite"] is True
    assert culprit["before"] == "add_mask"
