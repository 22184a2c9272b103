"""A tensor the user still holds gets the same graph however many traces ran since (issue 19):
finished traces are kept while a tensor of theirs lives (kept_traces.py, at most MAX_SESSIONS);
past that bound the graph says its trace annotations were lost, and a diff refuses to compare
it with a graph that has them instead of reporting differences that come only from that."""

from __future__ import annotations

import gc
from typing import Any

import paddle
import pytest
from paddle_versions import requires_paddle_33

from paddleviz_widget import GraphWidget, PaddlevizError, build_graph, trace
from paddleviz_widget.tracer.capture import kept_traces, session


def small_model() -> paddle.nn.Layer:
    return paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 2))


def traced_step(model: Any = None) -> paddle.Tensor:
    model = model or small_model()
    with trace(model):
        y = model(paddle.randn([3, 4]))
        y.sum().backward()
    return y


def same_graph(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Structure, annotations and groups all equal (the whole document)."""
    for key in ("nodes", "edges", "groups", "tensors", "sites", "ops", "files"):
        assert a[key] == b[key], key
    assert a["meta"].get("annotations") == b["meta"].get("annotations")
    assert "trace_lost" not in b["meta"]


@pytest.fixture(autouse=True)
def fresh_sessions():
    session.RECENT_SESSIONS.clear()
    yield
    session.RECENT_SESSIONS.clear()


@requires_paddle_33  # "dump": Paddle's backward dump
def test_three_models_traced_in_turn_keep_the_first_graph() -> None:
    paddle.seed(0)
    y_first = traced_step()
    right_after = build_graph(y_first)
    assert right_after["groups"] and "dump" in right_after["meta"]["annotations"]
    y_second = traced_step()
    traced_step()
    same_graph(right_after, build_graph(y_first))
    diff = GraphWidget.diff(y_first, y_second).graph
    counts = diff["meta"]["diff"]["counts"]
    assert all(not any(c.values()) for c in counts.values()), counts


def test_the_first_graph_survives_up_to_the_bound_and_says_so_past_it() -> None:
    paddle.seed(0)
    y_first = traced_step()
    right_after = build_graph(y_first)
    held = [traced_step() for _ in range(kept_traces.MAX_SESSIONS - 1)]
    same_graph(right_after, build_graph(y_first))  # MAX_SESSIONS sessions alive: all kept
    held.append(traced_step())  # one more: the oldest is dropped
    late = build_graph(y_first)
    assert "finished traces kept" in late["meta"]["trace_lost"]
    assert late["meta"]["notice"].startswith("The trace() that saw this graph was dropped")
    assert [n["name"] for n in late["nodes"]] == [n["name"] for n in right_after["nodes"]]
    with pytest.raises(PaddlevizError, match="lost its trace annotations"):
        GraphWidget.diff(y_first, held[0])
    # A tensor nobody holds any more does not keep its session.
    del held[:]
    gc.collect()
    traced_step()
    assert len(list(session.RECENT_SESSIONS.newest_first())) <= kept_traces.ALWAYS_KEPT + 1


def test_a_step_held_through_a_long_loop_says_what_was_lost() -> None:
    paddle.seed(0)
    model = small_model()
    kept = []
    with trace(model):
        for _ in range(session.MAX_RECORDS + 2):
            y = model(paddle.randn([3, 4]))
            y.sum().backward()
            kept.append(y)
        first = build_graph(kept[0])
    assert "backward passes kept in one trace" in first["meta"]["trace_lost"]
    assert build_graph(kept[-1])["groups"]  # the newest steps keep everything


def test_a_dead_model_keeps_its_parameter_names_in_the_held_graph() -> None:
    paddle.seed(0)
    y_first = traced_step()  # the model goes out of scope here
    names = {n["param"]["name"] for n in build_graph(y_first)["nodes"] if "param" in n}
    for _ in range(3):
        traced_step()
    again = {n["param"]["name"] for n in build_graph(y_first)["nodes"] if "param" in n}
    assert names == again == {"0.weight", "0.bias", "2.weight", "2.bias"}


def test_a_tensor_no_trace_saw_is_never_said_to_have_lost_one() -> None:
    paddle.seed(0)
    model = small_model()
    z = model(paddle.randn([3, 4]))  # outside any trace, alive through all of them
    held = [traced_step() for _ in range(kept_traces.MAX_SESSIONS + 2)]
    assert "trace_lost" not in build_graph(z)["meta"]
    assert "trace_lost" in build_graph(held[0])["meta"]
