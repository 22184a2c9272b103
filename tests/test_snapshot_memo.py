"""A recorder's snapshots reuse what its earlier ones read (snapshot_memo.py: group ids, Group
records, parameters' pointers): after the model changed between two forwards (a layer put in
the middle shifts every later group id; a parameter replaced), a snapshot of the second
forward's graph is what a fresh recorder that saw only that forward gives."""

from __future__ import annotations

import paddle
import paddle.nn as nn
import pytest

from paddleviz_widget.tracer.capture.layer_scopes import LayerScopeRecorder
from paddleviz_widget.tracer.read.grad_node import grad_node_of
from paddleviz_widget.tracer.read.walk import walk_backward_graph


def _graph(y: paddle.Tensor) -> frozenset[int]:
    return frozenset(n.ptr for n in walk_backward_graph([grad_node_of(y)]).nodes)


@pytest.mark.skipif(
    not hasattr(nn.Sequential, "insert"),
    reason=f"paddle {paddle.__version__}: no Sequential.insert",
)
def test_a_changed_model_is_snapshot_as_a_fresh_recorder_sees_it():
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))
    kept = LayerScopeRecorder(model).start()
    try:
        y = model(paddle.randn([3, 4]))
        first = kept.snapshot(_graph(y))
        assert first is not None and first.groups
        model.insert(1, nn.Sequential(nn.Linear(4, 4), nn.ReLU()))  # later ids shift
        model[0].weight = model[0].create_parameter([4, 4])  # a new parameter
        kept.pause()
        kept.start()  # (what a watched run does between captures; the memo stays)
        fresh = LayerScopeRecorder(model).start()
        try:
            y = model(paddle.randn([3, 4]))
            graph = _graph(y)
            ours, theirs = kept.snapshot(graph), fresh.snapshot(graph)
        finally:
            fresh.stop()
    finally:
        kept.stop()
    assert ours is not None and theirs is not None
    assert ours.groups == theirs.groups
    assert [g.name for g in ours.groups] != [g.name for g in first.groups]
    assert ours.group_of_ptr == theirs.group_of_ptr
    assert ours.layer_keys == theirs.layer_keys
    assert ours.call_sites == theirs.call_sites
