"""discover_model: the nn.Layer that names a graph's parameters when the user passed none."""

from __future__ import annotations

import gc

import paddle
import paddle.nn as nn
import pytest

from paddleviz_widget import build_graph
from paddleviz_widget.tracer.capture import replay
from paddleviz_widget.tracer.read.grad_node import grad_node_of
from paddleviz_widget.tracer.read.walk import walk_backward_graph


def _net() -> nn.Layer:
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def _accumulation_ptrs(y: paddle.Tensor) -> set[int]:
    walk = walk_backward_graph([grad_node_of(y)])
    return {n.ptr for n in walk.nodes if n.is_accumulation}


def _no_gc_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> list[object]:
        raise AssertionError("searched every live object although the caller had the model")

    monkeypatch.setattr(replay.gc, "get_objects", refuse)


def test_the_callers_model_is_found_without_searching_all_objects(monkeypatch):
    model = _net()
    y = model(paddle.randn([3, 4]))
    _no_gc_scan(monkeypatch)
    assert replay.discover_model(_accumulation_ptrs(y)) is model


def test_a_model_the_caller_cannot_see_is_still_found():
    holder = {"hidden": _net()}  # not a Layer itself: only the gc search reaches it
    y = holder["hidden"](paddle.randn([3, 4]))
    assert replay.discover_model(_accumulation_ptrs(y)) is holder["hidden"]


def test_a_sublayer_in_scope_does_not_hide_the_whole_model():
    holder = {"model": _net()}
    head = holder["model"][2]  # the caller sees only the last Linear
    y = holder["model"](paddle.randn([3, 4]))
    assert replay.discover_model(_accumulation_ptrs(y)) is holder["model"]
    assert head is holder["model"][2]


def test_build_graph_names_parameters_from_the_callers_model(monkeypatch):
    model = _net()
    y = model(paddle.randn([3, 4]))
    y.sum().backward()  # freed graph: the names come from the model alone
    _no_gc_scan(monkeypatch)
    graph = build_graph(y)
    assert graph["nodes"] and gc.isenabled()
    names = {n["param"]["name"] for n in graph["nodes"] if n.get("param")}
    assert names == {name for name, _ in model.named_parameters()}
