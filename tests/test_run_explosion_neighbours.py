"""One layer's gradient explodes in a real training run: the spike is reported, and the
layers beside it are not called vanishing (their norms stayed where they were; the vanishing
rule measured them against the exploded neighbour, or against it as the largest layer norm).
Oracle: each layer's L2 from p.grad (float64 NumPy) in the loop."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from run_models import layer_grad_l2

from paddleviz_widget import open_run, trace

EXPLODES_AT = 30


# the first layer (one neighbour), the second (the first's only neighbour), a middle one
@pytest.mark.parametrize("which", [0, 1, 2])
def test_an_exploding_layer_is_a_spike_and_its_neighbours_do_not_vanish(tmp_path, which):
    paddle.seed(0)
    model = paddle.nn.Sequential(*[paddle.nn.Linear(32, 32) for _ in range(5)])
    opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
    step = [0]
    for p in model[which].parameters():  # a bad batch through one unnormalised layer
        p.register_hook(lambda g: g * 1e9 if step[0] == EXPLODES_AT else g)
    norms = []
    with trace(model, stats=True, every=1000, run_dir=tmp_path / "run"):
        for step[0] in range(EXPLODES_AT + 3):
            model(paddle.randn([8, 32])).square().mean().backward()
            norms.append([layer_grad_l2(layer) for layer in model])
            if step[0] != EXPLODES_AT:  # (the exploded step is not applied)
                opt.step()
            opt.clear_grad()
    norms = np.array(norms)
    median = np.median(norms[:EXPLODES_AT], axis=0)
    ratio = norms[EXPLODES_AT] / median
    assert ratio[which] > 1e8  # the oracle: that layer exploded, the others did not move
    assert np.all(np.delete(ratio, which) < 10) and np.all(np.delete(ratio, which) > 0.1)
    found = [(a.step, a.kind, a.layer) for a in open_run(tmp_path / "run").anomalies]
    assert (EXPLODES_AT, "spike", str(which)) in found
    assert [f for f in found if f[1] == "vanishing"] == []
