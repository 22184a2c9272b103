"""A watched run's recorder claims the nodes of a forward from the backward's walk, after the
forward (``deferred``): the same layer groups, claims (in the same order), call sites and
names as the recorder that walks at each layer call's end, on the same forward."""

from __future__ import annotations

import paddle
import paddle.nn as nn
import pytest
from paddle_versions import requires_hook_kwargs
from test_layer_scopes import MODELS, Discards, _input

from paddleviz_widget.tracer.capture.layer_scopes import LayerScopeRecorder, LayerScopes
from paddleviz_widget.tracer.read.grad_node import grad_node_of
from paddleviz_widget.tracer.read.walk import walk_backward_graph


class SideBranch(nn.Layer):
    """A layer whose output is kept but not in the loss: its nodes are outside the walk."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.side = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        h = self.a(x)
        self.kept = self.side(h)
        return self.b(paddle.tanh(h)).mean()


CASES = {**MODELS, "side": (SideBranch, [2, 4]), "discards": (Discards, [2, 4])}


def _same(a: LayerScopes | None, b: LayerScopes | None) -> None:
    assert a is not None and b is not None
    assert a.groups == b.groups
    assert list(a.group_of_ptr.items()) == list(b.group_of_ptr.items())
    assert a.call_sites == b.call_sites
    assert list(a.node_sites.items()) == list(b.node_sites.items())
    assert list(a.node_names.items()) == list(b.node_names.items())


@requires_hook_kwargs
@pytest.mark.parametrize("key", sorted(CASES))
@pytest.mark.parametrize("steps", [1, 3])
def test_claims_from_the_walk_are_the_claims_made_at_each_call(key, steps):
    paddle.seed(0)
    cls, shape = CASES[key]
    model = cls()
    eager = LayerScopeRecorder(model).start()
    deferred = LayerScopeRecorder(model, deferred=True).start()
    try:
        for _ in range(steps):  # earlier forwards' claims stay while later ones are made
            y = model(_input(shape))
            objects: list = []
            walk = walk_backward_graph([grad_node_of(y)], objects)
            ptrs = frozenset(n.ptr for n in walk.nodes)
            assert deferred._rec_ref[0].pending  # nothing claimed before it is asked for
            deferred.claim_pending(walk, objects)
            _same(eager.snapshot(ptrs), deferred.snapshot(ptrs))
            _same(eager.snapshot(), deferred.snapshot())
            y.backward()
            eager.end_epoch()
            deferred.end_epoch()
    finally:
        a, b = eager.stop(), deferred.stop()
    _same(a, b)


@requires_hook_kwargs
def test_claims_without_a_walk_and_at_stop():
    paddle.seed(0)
    model = SideBranch()
    eager = LayerScopeRecorder(model).start()
    deferred = LayerScopeRecorder(model, deferred=True).start()
    model(_input([2, 4]))
    _same(eager.snapshot(), deferred.snapshot())  # claimed by asking Paddle, when asked
    model(_input([2, 4]))
    _same(eager.stop(), deferred.stop())
