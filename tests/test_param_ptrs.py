"""A recorder reads each parameter's accumulation-node pointer once (param_ptrs.py): what it
answers is what Paddle says now (accumulation_ptr), across training steps, a parameter frozen
and thawed, a parameter replaced by a new one, and a parameter freed."""

from __future__ import annotations

import gc

import paddle
import paddle.nn as nn

from paddleviz_widget.tracer.capture.param_ptrs import ParamPtrs
from paddleviz_widget.tracer.read.params import accumulation_ptr


def _step(model: nn.Layer, opt: paddle.optimizer.Optimizer) -> None:
    model(paddle.randn([3, 4])).mean().backward()
    opt.step()
    opt.clear_grad()


def _agree(known: ParamPtrs, model: nn.Layer) -> None:
    for name, p in model.named_parameters():
        assert known.of(p) == accumulation_ptr(p), name


def test_known_pointers_are_paddles_own():
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    known = ParamPtrs()
    for _ in range(3):
        _step(model, opt)
        _agree(known, model)
    model[0].weight.stop_gradient = True  # frozen: no gradient to place
    assert known.of(model[0].weight) is None
    _step(model, opt)
    _agree(known, model)
    model[0].weight.stop_gradient = False
    _step(model, opt)
    _agree(known, model)
    old = model[2].weight
    model[2].weight = model[2].create_parameter([4, 2])  # replaced by a new parameter
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    _step(model, opt)
    _agree(known, model)
    assert known.of(old) == accumulation_ptr(old)
    del old
    gc.collect()
    for _ in range(20):  # new parameters, some perhaps at a freed one's id()
        layer = nn.Linear(4, 4)
        layer(paddle.randn([1, 4])).sum().backward()
        _agree(known, layer)
