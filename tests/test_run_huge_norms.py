"""Finite gradients whose norms are past float32's range (a float64 model exploding; float32
gradients whose layer norm overflows): the log stores them as float32 rounds them (inf), with
no NaN/Inf counted, says no warning into the user's output and goes on under warnings as
errors (NumPy's overflow warnings stopped the log at that very step). Oracle: p.grad read by
NumPy in float64 in the loop, rounded to float32 as the log's format stores it."""

from __future__ import annotations

import json
import warnings

import numpy as np
import paddle
import pytest

from paddleviz_widget import open_run, trace


class Mixed(paddle.nn.Layer):
    """A float64 layer (``wide``) and a float32 one (``head``)."""

    def __init__(self) -> None:
        super().__init__()
        self.wide = paddle.nn.Layer()
        self.wide.weight = self.wide.create_parameter([64, 64], dtype="float64")
        self.head = paddle.nn.Linear(64, 4)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.head(paddle.matmul(x.astype("float64"), self.wide.weight).astype("float32"))


def _exploding(model: Mixed, step: list[int]) -> None:
    """Step 3: wide's gradient 1e200 everywhere (finite in float64). Step 4: head's weight
    and bias norms 3e38 each (finite in float32), their layer's L2 4.2e38 (not)."""
    at = {3: {"wide.weight": 1e200}, 4: {"head.weight": 3e38 / 16, "head.bias": 1.5e38}}

    def hook_of(name: str):  # noqa: ANN202
        def hook(g: paddle.Tensor) -> paddle.Tensor:
            value = at.get(step[0], {}).get(name)
            return g if value is None else paddle.full_like(g, value)

        return hook

    for name, p in model.named_parameters():
        p.register_hook(hook_of(name))


def _norm_and_max(g: np.ndarray) -> list[float]:
    top = float(np.abs(g).max())  # the norm scaled by it: no square overflows float64
    return [top * float(np.sqrt(((g / top) ** 2).sum())) if top else 0.0, top]


@pytest.mark.parametrize("filter_", ["error", "always"])
def test_norms_past_float32_are_inf_in_the_log_without_a_warning(tmp_path, filter_):
    paddle.seed(0)
    model, step = Mixed(), [0]
    _exploding(model, step)
    names = [n for n, _ in model.named_parameters()]
    want = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(filter_)  # "error": a user's -W error, a test suite's filter
        with trace(model, stats=True, every=1000, run_dir=tmp_path / "run"):
            for step[0] in range(6):
                model(paddle.randn([4, 64])).square().mean().backward()
                grads = [p.grad.numpy().astype(np.float64) for p in model.parameters()]
                want.append([_norm_and_max(g) for g in grads])
                model.clear_gradients()
        run = open_run(tmp_path / "run")
        norm, max_abs = run.param_stat("norm"), run.param_stat("max_abs")
        layer_norm = run.layer_norm()
        problems = run.problems()
    ours = [str(w.message) for w in caught if "paddleviz_widget" in w.filename]
    assert ours == []
    assert run.meta["status"] == "finished" and run.steps.tolist() == list(range(6))
    with np.errstate(over="ignore"):  # float32 rounds what is past its range to inf
        want32 = np.array(want, np.float64).astype(np.float32)
    np.testing.assert_allclose(norm, want32[:, :, 0], rtol=2e-6)
    np.testing.assert_allclose(max_abs, want32[:, :, 1], rtol=0)
    assert np.isinf(norm[3, names.index("wide.weight")]) and np.isfinite(norm[4]).all()
    assert run.param_stat("nan").sum() == 0 and run.param_stat("inf").sum() == 0
    head = run.layers.index("head")
    assert np.isinf(layer_norm[4, head]) and np.isfinite(np.delete(layer_norm[4], head)).all()
    assert all(p.kind != "nonfinite" for p in problems)  # nothing was NaN/Inf


def test_a_norm_past_float32_reads_inf_from_the_live_tail_not_no_gradient(tmp_path):
    """float32 gradients, every element finite (1e37), whose norm is not (6.4e38): the tail
    line of that step said null (orjson's inf), read as "no gradient" while the run was live
    and for good by a run killed before its next part."""
    from paddleviz_widget.runs.grad_kernel import kernel

    kernel()  # compiled now: the step is a clean one of the one-call path from step 1 on
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(64, 64), paddle.nn.Linear(64, 4))
    step = [0]
    model[0].weight.register_hook(lambda g: paddle.full_like(g, 1e37) if step[0] == 3 else g)
    lines, live, want = [], None, []
    with trace(model, stats=True, every=1000, run_dir=tmp_path / "run"):
        for step[0] in range(5):
            model(paddle.randn([4, 64])).square().mean().backward()
            want.append(np.linalg.norm(model[0].weight.grad.numpy().astype(np.float64)))
            model.clear_gradients()
        lines = (tmp_path / "run" / "tail.jsonl").read_text().splitlines()
        live = open_run(tmp_path / "run").param_stat("norm")
    assert np.finfo(np.float32).max < want[3] < np.inf  # the oracle: past float32's range
    [line] = [json.loads(t) for t in lines if json.loads(t)["step"] == 3]
    assert line["norm"][0] == np.inf and None not in line["norm"]
    assert live[3, 0] == np.inf and np.isfinite(live[[0, 1, 2, 4]]).all()
