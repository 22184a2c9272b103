"""A big model's gradients read during its backward (runs/early_read.py), on training loops
where a gradient is accumulated more than once: a weight used inside and outside a reentrant
recompute block (accumulated in the block's own backward, then again), micro-batches summed
over two backwards, gradients freed or zeroed between steps. Every recorded step equals
NumPy's float64 account of p.grad right after that backward."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle.distributed.fleet.utils import recompute

from paddleviz_widget import open_run, trace
from paddleviz_widget.runs.compiled_read import CompiledRead
from paddleviz_widget.runs.grad_kernel import kernel

pytestmark = pytest.mark.skipif(kernel() is None, reason="llvmlite is not installed (fast extra)")


class Tied(paddle.nn.Layer):
    """``shared`` inside the recompute block and after it (2.1M gradient elements)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = paddle.nn.Linear(1024, 1024)
        self.shared = paddle.nn.Linear(1024, 1024)
        self.head = paddle.nn.Linear(1024, 2)

    def block(self, x: paddle.Tensor) -> paddle.Tensor:
        return paddle.nn.functional.relu(self.shared(self.inner(x)))

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.head(self.shared(recompute(self.block, x)))


def _norms(model: paddle.nn.Layer) -> list[float]:
    return [float(np.sqrt((p.grad.numpy().astype(np.float64) ** 2).sum()))
            for p in model.parameters()]  # fmt: skip


@pytest.mark.parametrize("micro", [1, 2])
@pytest.mark.parametrize("set_to_zero", [True, False])
def test_gradients_read_in_the_backward_equal_them_after_it(tmp_path, monkeypatch, micro,
                                                            set_to_zero):  # fmt: skip
    early: list[int] = []
    rest = CompiledRead.read_rest

    def counted(self):  # how many parameters this step were read during its backward
        early.append(len(self.early.sent) if self.early is not None else 0)
        return rest(self)

    monkeypatch.setattr(CompiledRead, "read_rest", counted)
    paddle.seed(0)
    model = Tied()
    opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
    want = []
    with trace(model, every=1000, run_dir=tmp_path / "run"):
        for _ in range(5):
            for _ in range(micro):  # each backward is a recorded step
                x = paddle.randn([4, 1024])
                x.stop_gradient = False  # (recompute's block gets a gradient to send)
                model(x).square().mean().backward()
                want.append(_norms(model))
            opt.step()
            opt.clear_grad(set_to_zero=set_to_zero)
    got = open_run(tmp_path / "run").param_stat("norm")
    np.testing.assert_allclose(got, np.array(want), rtol=1e-6)
    # step 0 is a capture, step 1 starts the compiled call; from step 2 on, all six
    assert early[0] == 0 and early[1:] == [6] * (5 * micro - 2)
