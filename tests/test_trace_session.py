"""trace() leaves the user's process as it found it: stderr, log level, flags, patched entry
points, their own dump directory, and gradients (issue 3, item 1)."""

from __future__ import annotations

import gc
import io
import os
import sys
import tempfile
import weakref

import paddle
import pytest
from graph_dicts import nested_graph
from models import lenet_output
from paddle_versions import LOGS_AT_RUN_TIME, requires_dump, requires_vlog_switch

from paddleviz_widget import GraphWidget, build_graph, trace
from paddleviz_widget.tracer.capture.vlog import get_vlog_level, set_vlog_level
from paddleviz_widget.tracer.parse.paddle_dump import find_dump_files


def _entry_points():
    return (paddle.Tensor.backward, paddle.autograd.backward, paddle.grad)


def _fd2_identity():
    st = os.fstat(2)
    return (st.st_dev, st.st_ino)


def test_everything_is_restored_after_normal_exit():
    model, _ = lenet_output()
    before = (_entry_points(), _fd2_identity(), get_vlog_level())
    flag = paddle.get_flags(["FLAGS_call_stack_level"])
    with trace(model):
        assert paddle.Tensor.backward is not before[0][0]
        model(paddle.randn([1, 3, 32, 32])).sum().backward()
    assert (_entry_points(), _fd2_identity(), get_vlog_level()) == before
    assert paddle.get_flags(["FLAGS_call_stack_level"]) == flag


def test_everything_is_restored_when_the_body_raises():
    model, _ = lenet_output()
    before = (_entry_points(), _fd2_identity(), get_vlog_level())
    hooks = dict(model._forward_pre_hooks), dict(model._forward_post_hooks)
    with pytest.raises(ZeroDivisionError), trace(model):
        model(paddle.randn([1, 3, 32, 32])).sum().backward()
        1 / 0  # noqa: B018
    assert (_entry_points(), _fd2_identity(), get_vlog_level()) == before
    assert (dict(model._forward_pre_hooks), dict(model._forward_post_hooks)) == hooks


@requires_vlog_switch
def test_a_users_own_vlog_level_survives():
    set_vlog_level(2)
    try:
        model, _ = lenet_output()
        with trace(model):
            model(paddle.randn([1, 3, 32, 32])).sum().backward()
        assert get_vlog_level() == 2
    finally:
        set_vlog_level(0)


class _Noisy(paddle.autograd.PyLayer):
    """Writes to fd 2 from inside the backward pass, i.e. while trace() captures it."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        os.write(2, b"user backward says hello\n")
        return grad * 2


def test_user_stderr_inside_backward_is_passed_through(tmp_path, monkeypatch):
    target = tmp_path / "stderr.txt"
    saved = os.dup(2)
    # Outside pytest, sys.stderr writes to fd 2; make it so here too.
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(os.fdopen(2, "wb", closefd=False)))
    with open(target, "wb") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            model, _ = lenet_output()
            with trace(model):
                y = _Noisy.apply(model(paddle.randn([1, 3, 32, 32])))
                os.write(2, b"user forward says hello\n")
                y.sum().backward()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    text = target.read_text()
    assert "user forward says hello" in text and "user backward says hello" in text
    # Paddle's VLOG is ours, including the PyLayer node's tab-indented records.
    assert "begin run" not in text and "gradnode_ptr" not in text and "PyLayer" not in text
    # Before Paddle 3.3 nothing annotates a traced PyLayer graph, and the replay must not run
    # through it (on 2.6/3.0 that crashed this process): the graph says why instead.
    graph = nested_graph(y)
    if LOGS_AT_RUN_TIME:  # (2.6 and 3.0 through glog's FLAGS_v)
        assert all(e["grad"] is not None for e in graph["edges"])
    else:
        assert graph["meta"]["notice"]


@requires_dump
def test_users_own_dump_directory_still_gets_their_dump(tmp_path):
    model, _ = lenet_output()
    with trace(model):
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward(dump_backward_graph_path=str(tmp_path))
    assert "backward" in find_dump_files(tmp_path)
    assert "dump" in build_graph(y)["meta"]["annotations"]


def test_gradients_are_those_of_an_untraced_backward():
    paddle.seed(3)
    model, _ = lenet_output()
    x = paddle.randn([1, 3, 32, 32])
    model(x).sum().backward()
    plain = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    model.clear_gradients()
    with trace(model):
        model(x).sum().backward()
    for name, p in model.named_parameters():
        assert (p.grad.numpy() == plain[name]).all(), name


def test_no_temporary_dump_is_left_behind():
    before = set(os.listdir(tempfile.gettempdir()))
    model, _ = lenet_output()
    with trace(model):
        model(paddle.randn([1, 3, 32, 32])).sum().backward()
    leftovers = set(os.listdir(tempfile.gettempdir())) - before
    assert not [f for f in leftovers if f.startswith("paddleviz-dump-")]


def test_trace_refuses_what_is_not_a_model():
    with pytest.raises(TypeError, match=r"nn.Layer"):
        trace("model")


@requires_dump
def test_replay_without_trace_changes_no_gradient_and_annotates():
    model, y = lenet_output()
    graph = nested_graph(y)  # backward not run yet: replayed once, side-effect free
    assert all(p.grad is None for p in model.parameters())
    assert all(e["grad"] is not None for e in graph["edges"])
    assert "notice" not in graph["meta"]
    y.sum().backward()  # the user's own backward still works: the graph was retained
    assert all(p.grad is not None for p in model.parameters())


def test_after_uncaptured_backward_the_widget_says_how_to_get_the_rest():
    model, y = lenet_output()
    y.sum().backward()
    graph = nested_graph(y, model=model)
    assert "trace(" in graph["meta"]["notice"]
    names = {n["param"]["name"] for n in graph["nodes"] if n["kind"] == "param"}
    assert names == {name for name, _ in model.named_parameters()}
    by_id = {n["id"]: n for n in graph["nodes"]}
    for edge in graph["edges"]:
        target = by_id[edge["target"]]
        if target["kind"] == "param":
            assert edge["grad"]["shape"] == target["param"]["shape"]


def test_graph_and_widget_hold_no_reference_to_the_tensor():
    model, y = lenet_output()
    with trace(model):
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward()
    widget = GraphWidget(y)
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None
    assert widget.graph["nodes"]  # the widget still has its data


def test_paddle_without_runtime_vlog_still_traces_and_says_why(monkeypatch):
    """As on Paddle 3.0/2.6: no set_vlog_level, no dump kwarg. Structure, groups and parameter
    shapes still come through, and the notice names the fix."""
    import paddleviz_widget.tracer.capture.backward_capture as capture_mod
    import paddleviz_widget.tracer.capture.vlog as vlog_mod

    monkeypatch.setattr(vlog_mod, "runtime_switch_available", lambda: False)
    monkeypatch.setattr(vlog_mod, "flags_v_cell", lambda: None)  # nor glog's FLAGS_v
    monkeypatch.setattr(vlog_mod, "get_vlog_level", lambda: 0)
    monkeypatch.setattr(capture_mod, "accepts_dump_kwarg", lambda function: False)
    model, _ = lenet_output()
    with trace(model):
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward()
    graph = nested_graph(y)
    assert "GLOG_v=6" in graph["meta"]["notice"] and "paddlepaddle>=3.3" in graph["meta"]["notice"]
    assert graph["groups"] and all(n["group"] for n in graph["nodes"])
    assert all(p.grad is not None for p in model.parameters())
    param_edges = [
        e
        for e in graph["edges"]
        if e["target"] in {n["id"] for n in graph["nodes"] if n["kind"] == "param"}
    ]
    assert param_edges and all(e["grad"]["shape"] for e in param_edges)


def test_big_model_skips_per_op_stacks_but_keeps_layer_call_sites(monkeypatch):
    import paddleviz_widget.tracer.capture.session as session_mod

    monkeypatch.setattr(session_mod, "CALL_SITE_MAX_LAYERS", 3)  # LeNet has 14 layers
    flag = paddle.get_flags(["FLAGS_call_stack_level"])
    model, _ = lenet_output()
    with trace(model) as session:
        assert paddle.get_flags(["FLAGS_call_stack_level"]) == flag  # left alone
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward()
    assert session.call_sites is False
    graph = nested_graph(y)
    root = next(g["id"] for g in graph["groups"] if g["parent"] is None)
    ops = [n for n in graph["nodes"] if n["kind"] != "param"]
    assert all(n["call_site"] for n in ops)
    # An op inside a sublayer gets the line in the model that called that layer; one in the
    # model's own forward, the line that called the model (here, this test).
    for n in ops:
        expected = __file__ if n["group"] == root else "models.py"
        assert n["call_site"]["file"].endswith(expected.rsplit("/", 1)[-1]), n


def test_replay_of_a_freed_big_graph_prints_nothing(monkeypatch, capfd):
    import paddleviz_widget.tracer.merge.collect as collect

    monkeypatch.setattr(collect, "SLOT_LOG_MAX_NODES", 5)  # as if the graph were huge
    model, y = lenet_output()
    y.sum().backward()
    capfd.readouterr()
    graph = build_graph(y)
    assert "notice" in graph["meta"]
    assert capfd.readouterr().err == ""  # Paddle's warning about our failed replay is ours
