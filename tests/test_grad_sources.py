"""Each edge's gradient says where it came from (meta.sources, one code per edge): the trace()'s
backward log, a replayed backward, or the parameter itself. Checked against what the test knows
independently: whether the backward ran inside trace(), and which edges end at a parameter of
the model with that parameter's own dtype and shape (from the model, not from the tracer)."""

from __future__ import annotations

import tempfile
from typing import Any

import paddle
import pytest
from graph_dicts import nested
from oracle_models import lenet, lenet_and_input
from paddle_versions import requires_paddle_33
from program_models import inputs

from paddleviz_widget import build_graph, trace
from paddleviz_widget.errors import GraphDocumentError
from paddleviz_widget.graph import Graph, validate_graph_dict
from paddleviz_widget.tracer.read.program import program_view_available


def _sources(doc: dict[str, Any]) -> list[str | None]:
    meta = doc["meta"]["sources"]
    return [None if c == "." else meta["codes"][c] for c in meta["edges"]]


def _grads(doc: dict[str, Any]) -> list[bool]:
    return [e.get("grad") is not None for e in doc["edges"]]


@requires_paddle_33
def test_traced_edges_come_from_the_trace_log() -> None:
    case = lenet()
    with trace(case.model), tempfile.TemporaryDirectory() as d:
        y = case.run(d)
    doc = build_graph(y)
    validate_graph_dict(doc)
    assert all(_grads(doc))
    assert set(_sources(doc)) == {"vlog"}


@requires_paddle_33
def test_a_fresh_graph_is_annotated_by_its_replay() -> None:
    model, x = lenet_and_input()
    doc = build_graph(model(x), model=model)
    assert all(_grads(doc))
    assert set(_sources(doc)) == {"replay-vlog"}


@requires_paddle_33
def test_after_backward_only_parameter_edges_are_known_and_said_inferred() -> None:
    case = lenet()
    with tempfile.TemporaryDirectory() as d:
        y = case.run(d)  # backward ran outside trace(): the graph is freed, nothing replays
    doc = build_graph(y, model=case.model)
    params = {n: p for n, p in case.model.named_parameters()}
    param_of = {n["id"]: (n.get("param") or {}).get("name") for n in doc["nodes"]}
    expected = ["param" if param_of[e["target"]] in params else None for e in doc["edges"]]
    assert _sources(doc) == expected
    assert expected.count("param") == len(params)
    assert _grads(doc) == [s is not None for s in expected]
    for edge in nested(doc)["edges"]:  # the parameter's own shape, read from the model
        if param_of[edge["target"]] in params:
            assert edge["grad"]["shape"] == list(params[param_of[edge["target"]]].shape)


def test_sources_that_do_not_fit_the_edges_are_refused_naming_the_field() -> None:
    model, x = lenet_and_input()
    doc = build_graph(model(x), model=model)
    doc["meta"]["sources"]["edges"] += "L"
    with pytest.raises(GraphDocumentError, match=r"meta\.sources\.edges"):
        validate_graph_dict(doc)


@pytest.mark.skipif(not program_view_available(), reason="this Paddle cannot read programs")
def test_a_to_static_programs_op_edges_say_they_come_from_the_program() -> None:
    model, x = inputs("mlp")
    static = paddle.jit.to_static(model, full_graph=True)
    with trace(model):
        y = static(x)
        y.sum().backward()
    doc = build_graph(y)
    validate_graph_dict(doc)
    inside = [e["id"].startswith("p") for e in doc["edges"]]  # edges of the program's ops
    assert any(inside)
    for is_inside, has_grad, src in zip(inside, _grads(doc), _sources(doc)):
        assert (src is not None) == has_grad
        assert (src == "program") == (is_inside and has_grad)


def _node_sources(doc: dict[str, Any], field: str) -> list[str | None]:
    meta = doc["meta"]["sources"]
    text = meta.get("nodes", {}).get(field, "." * len(doc["nodes"]))
    return [None if c == "." else meta["codes"][c] for c in text]


@requires_paddle_33
def test_each_nodes_layer_parameter_and_call_site_say_where_they_came_from() -> None:
    """Inside trace(): the layer groups come from its record of the forward, the parameter
    names from the model (exactly the nodes whose name is one of the model's parameters), and
    each call site from Paddle's stack or the call of its layer. The document reads back
    unchanged, sources included."""
    case = lenet()
    with trace(case.model), tempfile.TemporaryDirectory() as d:
        y = case.run(d)
    doc = build_graph(y)
    validate_graph_dict(doc)
    names = {n for n, _ in case.model.named_parameters()}
    named = [(n.get("param") or {}).get("name") in names for n in doc["nodes"]]
    assert _node_sources(doc, "param") == ["model" if x else None for x in named]
    grouped = [n.get("group") is not None for n in doc["nodes"]]
    assert _node_sources(doc, "group") == ["trace-layers" if g else None for g in grouped]
    sited = [n.get("call_site") is not None for n in doc["nodes"]]
    sites = _node_sources(doc, "call_site")
    assert [s is not None for s in sites] == sited
    assert set(sites) - {None} <= {"paddle-stack", "layer-call"}
    assert Graph.from_dict(doc).to_dict() == doc


def test_a_fresh_graph_says_its_layers_are_inferred_from_the_parameters() -> None:
    model, x = lenet_and_input()
    doc = build_graph(model(x), model=model)
    grouped = [n.get("group") is not None for n in doc["nodes"]]
    assert any(grouped)
    assert _node_sources(doc, "group") == ["param-owner" if g else None for g in grouped]


def test_node_sources_that_do_not_fit_the_nodes_are_refused_naming_the_field() -> None:
    model, x = lenet_and_input()
    doc = build_graph(model(x), model=model)
    doc["meta"]["sources"]["nodes"]["group"] += "o"
    with pytest.raises(GraphDocumentError, match=r"meta\.sources\.nodes\.group"):
        validate_graph_dict(doc)
