"""What the vanishing finding says when gradient norms alone cannot tell its two causes apart
(runs/vanishing_rule.py): an RNN whose recurrent weights are too large from the start makes
its head look "vanishing" against the exploded layer before it. The finding names the
neighbour it measured against and, for the model's last layer, the exploding reading too,
with the factor. Oracle: each layer's L2 from p.grad (float64 NumPy) in the loop."""

from __future__ import annotations

import re

import numpy as np
import paddle
import paddle.nn.functional as F
from run_models import layer_grad_l2

from paddleviz_widget import open_run, trace


class _Seq(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.emb = paddle.nn.Embedding(100, 32)
        self.rnn = paddle.nn.SimpleRNN(32, 64)
        self.head = paddle.nn.Linear(64, 5)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        out, _ = self.rnn(self.emb(x))
        return self.head(out[:, -1])


def test_a_head_under_an_exploded_rnn_names_the_rnn_and_the_exploding_reading(tmp_path):
    paddle.seed(1)
    model = _Seq()
    for name, p in model.rnn.named_parameters():
        if "weight_hh" in name:
            p.set_value(p * 8)  # recurrent weights far too large: gradients explode through time
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    norms = []
    with trace(model, stats=True, every=1000, run_dir=tmp_path / "run"):
        for _ in range(25):
            x, y = paddle.randint(0, 100, [8, 20]), paddle.randint(0, 5, [8, 1])
            F.cross_entropy(model(x), y).backward()
            norms.append([layer_grad_l2(layer) for layer in (model.emb, model.rnn, model.head)])
            opt.step()
            opt.clear_grad()
    norms = np.array(norms)
    assert (norms[:, 1] > 1e3 * norms[:, 2]).all()  # the oracle: rnn's ~1e4x the head's
    [found] = open_run(tmp_path / "run").problems()
    assert (found.step, found.kind, found.layer) == (20, "vanishing", "head")  # the rules' 1st
    text = str(found)
    assert "its neighbour rnn's" in text
    assert "Or exploding gradients: head is the model's last layer" in text
    grows = float(re.search(r"grows ([0-9.e+]+)x on its way back into rnn", text).group(1))
    assert np.isclose(grows, norms[20, 1] / norms[20, 2], rtol=2e-3)


def test_a_middle_layer_vanishing_names_its_neighbour_and_no_exploding_reading(tmp_path):
    paddle.seed(0)
    model = paddle.nn.Sequential(*[paddle.nn.Linear(16, 16) for _ in range(3)])
    for p in model[1].parameters():
        p.register_hook(lambda g: g * 1e-6)  # its own gradient only, not upstream's
    opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
    norms = []
    with trace(model, stats=True, every=1000, run_dir=tmp_path / "run"):
        for _ in range(22):
            model(paddle.randn([8, 16])).square().mean().backward()
            norms.append([layer_grad_l2(layer) for layer in model])
            opt.step()
            opt.clear_grad()
    [found] = open_run(tmp_path / "run").problems()
    assert (found.step, found.kind, found.layer) == (20, "vanishing", "1")
    smaller = 0 if norms[20][0] <= norms[20][2] else 2  # the oracle's smaller neighbour
    assert f"its neighbour {smaller}'s" in str(found)
    assert "exploding" not in str(found)
