"""The layer-scope recorder reads each layer call's input and output grad_fn, whose getter
leaks a reference (read/grad_node.py), and undoes those leaks together when the top-level
call ends (grad_node_later / release): every reference balanced, counted by sys.getrefcount,
after a forward, a forward that raised, and a recording dropped inside a forward."""

from __future__ import annotations

import gc
import inspect
import sys
import weakref

import paddle
import paddle.nn as nn
import pytest

from paddleviz_widget.tracer.capture.layer_scopes import LayerScopeRecorder
from paddleviz_widget.tracer.capture.scope_recording import Recording
from paddleviz_widget.tracer.read import grad_node as grad_node_mod
from paddleviz_widget.tracer.read.grad_node import grad_node_later, grad_node_of, release

# register_forward_post_hook(always_call=): the recorder's post hook runs when forward raises
ALWAYS_CALL = "always_call" in inspect.signature(nn.Layer.register_forward_post_hook).parameters


class Net(nn.Layer):
    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.fail = fail

    def forward(self, h):
        out = self.b(paddle.tanh(self.a(h)))
        if self.fail:
            raise ValueError("inside the forward")
        return out


def _made() -> paddle.Tensor:
    x = paddle.randn([2, 4])
    x.stop_gradient = False
    return paddle.tanh(x)  # a node made before the forward: the first layer's input


def test_release_undoes_each_read_once():
    h = _made()
    node = grad_node_of(h)
    refs = sys.getrefcount(node)
    leaked: list = []
    for _ in range(5):
        assert grad_node_later(h, leaked) is node
    assert len(leaked) == 5 * grad_node_mod._leak_per_access
    release(leaked)
    assert leaked == [] and sys.getrefcount(node) == refs
    release(leaked)  # nothing left: nothing undone twice
    assert sys.getrefcount(node) == refs


@pytest.mark.parametrize("deferred", [False, True])
def test_a_forward_leaves_every_reference_as_it_was(deferred):
    model, h = Net(), _made()
    node = grad_node_of(h)
    refs = sys.getrefcount(node)
    rec = LayerScopeRecorder(model, deferred=deferred).start()
    y = model(h)
    assert rec._rec_ref[0].leaked == []  # released when the top-level call ended
    out = weakref.ref(grad_node_of(y))
    rec.stop()
    assert sys.getrefcount(node) == refs
    assert out() is None  # y's node wrapper: nobody holds it, no leaked reference either
    y.sum().backward()


def test_a_forward_that_raised_leaves_every_reference_as_it_was():
    model, h = Net(fail=True), _made()
    node = grad_node_of(h)
    refs = sys.getrefcount(node)
    rec = LayerScopeRecorder(model).start()
    with pytest.raises(ValueError, match="inside the forward"):
        model(h)
    if not ALWAYS_CALL:  # no post hook runs on a raise (< 3.3): the next backward releases
        rec.end_epoch()
    assert rec._rec_ref[0].leaked == []
    rec.stop()
    if ALWAYS_CALL:  # (3.0.0 keeps 3 references more after a raised forward, before too)
        assert sys.getrefcount(node) == refs


def test_a_recording_dropped_inside_a_forward_releases():
    layer, h = nn.Linear(4, 4), _made()
    node = grad_node_of(h)
    refs = sys.getrefcount(node)
    rec = Recording()
    rec.enter(layer, (h,), {})  # never exits
    assert sys.getrefcount(node) > refs
    del rec
    gc.collect()
    assert sys.getrefcount(node) == refs
