"""A to_static model's program node opens into its program's backward ops (issue 23).

Oracle: Paddle's own program objects, reached through the to_static function itself
(``StaticFunction.get_concrete_program``), not through the tracer's run hook: op types and
counts, the parameter (``param.name``) each gradient output belongs to, and shapes. Parameter
shapes come from the model's parameters.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import paddle
import pytest
from paddle_versions import requires_paddle_33, requires_post_hooks
from program_models import Broken, Outer, inputs

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph.model import Graph
from paddleviz_widget.graph.problems import find_problems
from paddleviz_widget.graph.schema import validate_graph_dict
from paddleviz_widget.tracer.read.program import program_view_available

PROGRAM = "to_static program"


def _traced(name: str, **kwargs: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
    model, x = inputs(name)
    static = paddle.jit.to_static(model, full_graph=True)
    with trace(model, **kwargs):
        y = static(x)
        y.sum().backward()
    return model, static, x, build_graph(y)


def _backward_ops(static: Any, x: Any) -> tuple[list[Any], dict[str, list[str]]]:
    _, layer = static.forward.get_concrete_program(x)
    program = layer.train_program
    return list(program.backward_program.global_block().ops), program.program_name_attr


def _shape(value: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(d) for d in value.shape)
    except (ValueError, RuntimeError):
        return None


@requires_paddle_33
@pytest.mark.parametrize("name", ["mlp", "cnn", "block"])
def test_program_ops_are_paddles_own(name: str) -> None:
    model, static, x, doc = _traced(name)
    validate_graph_dict(doc)  # schema 2.2 with program_op nodes and no_stats edges
    graph = Graph.from_dict(doc)  # the document reads back through the codec
    assert graph.to_dict() == doc
    ops, attr = _backward_ops(static, x)
    expected = Counter(op.name().removeprefix("pd_op.") for op in ops
                       if op.name() != "builtin.shadow_output")  # fmt: skip
    program_nodes = [n for n in graph.nodes if n.kind == "program_op"]
    assert Counter(n.name for n in program_nodes) == expected
    # trace()'s layer hooks, which run while Paddle builds the program, left it as it is.
    untraced, ux = inputs(name)
    plain = paddle.jit.to_static(untraced, full_graph=True)
    plain(ux).sum().backward()
    plain_ops, _ = _backward_ops(plain, ux)
    assert Counter(op.name() for op in plain_ops) == Counter(op.name() for op in ops)
    # One program group, opening the Dy2St node's own layer group; every op inside it.
    (owner,) = [n for n in graph.nodes if n.name == "Dy2StGradNode"]
    (group,) = [g for g in graph.groups if g.type == PROGRAM]
    assert group.parent == owner.group
    parents = {g.id: g.parent for g in graph.groups}
    for node in program_nodes:
        chain, at = [], node.group
        while at is not None:
            chain.append(at)
            at = parents[at]
        assert group.id in chain
        assert node.ptr == owner.ptr
    # Edges in program order; every one says why it has no statistics.
    order = {n.id: k for k, n in enumerate(program_nodes)}
    inner = [e for e in graph.edges if e.source in order and e.target in order]
    assert inner and all(order[e.source] < order[e.target] for e in inner)
    program_edges = [e for e in graph.edges if e.id.startswith(f"{group.id}_")]
    assert all(e.no_stats and e.stats is None for e in program_edges)
    # Shapes inside are shapes of the program's own gradient values.
    shapes = {_shape(v) for op in ops for v in op.results()} - {None}
    assert {e.grad.shape for e in inner if e.grad is not None} <= shapes
    # Each parameter gradient leaves for that parameter's node, named as the model names it.
    by_static = {p.name: (n, tuple(p.shape)) for n, p in model.named_parameters()}
    nodes = {n.id: n for n in graph.nodes}
    leaving = {
        nodes[e.target].param.name: e.grad.shape
        for e in program_edges
        if nodes[e.target].param is not None and e.grad is not None
    }
    sent = [p for p, g in zip(attr["bp"], attr["bp_g"], strict=True) if g != "Fake_var"]
    assert leaving == {by_static[p][0]: by_static[p][1] for p in sent}


@requires_paddle_33
def test_program_ops_sit_in_the_layers_that_made_them() -> None:
    model, static, x, doc = _traced("mlp")
    graph = Graph.from_dict(doc)
    groups = {g.id: g for g in graph.groups}
    placed = {
        (n.name, groups[n.group].name)
        for n in graph.nodes
        if n.kind == "program_op" and n.group is not None
    }
    assert ("matmul_grad", "fc1") in placed and ("matmul_grad", "fc2") in placed
    assert ("add_grad", "fc1") in placed and ("add_grad", "fc2") in placed
    fc1 = next(
        g for g in graph.groups if g.name == "fc1" and groups[g.parent or ""].type == PROGRAM
    )
    assert fc1.type == "Linear"
    # tanh is called by the model's own forward, in no sublayer: directly in the program group.
    (tanh,) = [n for n in graph.nodes if n.name == "tanh_grad"]
    assert groups[tanh.group or ""].type == PROGRAM
    assert tanh.call_site is not None and tanh.call_site.file.endswith("program_models.py")


@requires_paddle_33
@requires_post_hooks
def test_stats_on_the_program_node_edges_and_none_inside() -> None:
    model, x = inputs("mlp")
    plain_model, _ = inputs("mlp")
    static = paddle.jit.to_static(model, full_graph=True)
    with trace(model, stats=True):
        y = static(x)
        y.sum().backward()
    graph = Graph.from_dict(build_graph(y))
    (owner,) = [n for n in graph.nodes if n.name == "Dy2StGradNode"]
    outer = [e for e in graph.edges if e.source == owner.id and e.id.startswith("e")]
    assert outer and all(e.stats is not None for e in outer)
    # Each leaving edge's statistics are those of the gradient its parameter got.
    nodes = {n.id: n for n in graph.nodes}
    grads = {n: p.grad.numpy() for n, p in model.named_parameters()}
    for e in outer:
        g = grads[nodes[e.target].param.name]
        assert e.stats.norm == pytest.approx(float(np.linalg.norm(g)), rel=1e-6)
        assert e.stats.max_abs == pytest.approx(float(np.abs(g).max()), rel=1e-6)
    inside = [e for e in graph.edges if e.id.startswith("p")]
    assert inside and all(e.stats is None and e.no_stats for e in inside)
    # .grad as a run without the widget gives it.
    plain = paddle.jit.to_static(plain_model, full_graph=True)
    plain(x).sum().backward()
    for (name, p), (_, q) in zip(model.named_parameters(), plain_model.named_parameters(),
                                 strict=True):  # fmt: skip
        assert np.array_equal(p.grad.numpy(), q.grad.numpy()), name


@requires_paddle_33
def test_a_forward_outside_trace_leaves_the_program_closed_and_says_why() -> None:
    model, x = inputs("mlp")
    static = paddle.jit.to_static(model, full_graph=True)
    y = static(x)
    with trace(model):
        y.sum().backward()
    doc = build_graph(y)
    assert not [n for n in doc["nodes"] if n.get("kind") == "program_op"]
    notices = doc["meta"].get("notices") or [doc["meta"]["notice"]]
    assert any("1 Dy2StGradNode node(s) shown closed" in n and "outside trace()" in n
               for n in notices)  # fmt: skip


@pytest.mark.skipif(program_view_available(), reason="this Paddle opens program nodes")
def test_a_paddle_without_the_program_view_says_so_in_one_line() -> None:
    """Paddle 3.0 (no HOOKED_RUN_IMPL; its program node is named "GradNodeBase") and 2.6."""
    _, _, _, doc = _traced("mlp")
    assert not [n for n in doc["nodes"] if n.get("kind") == "program_op"]
    notices = doc["meta"].get("notices") or [doc["meta"].get("notice")]
    closed = [n for n in notices if n and "node(s) shown closed" in n]
    assert len(closed) == 1 and paddle.__version__ in closed[0]


@requires_paddle_33
def test_sot_program_nodes_open_on_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """full_graph=False: SOT compiles the pieces between graph breaks; each program node
    gets its own program group, and the eager nodes between them stay as they are."""
    monkeypatch.setenv("MIN_GRAPH_SIZE", "0")  # SOT runs small pieces eagerly otherwise
    paddle.seed(0)
    model, x = Broken(), paddle.randn([3, 4])
    static = paddle.jit.to_static(model, full_graph=False)
    with trace(model):
        y = static(x)
        y.sum().backward()
    graph = Graph.from_dict(build_graph(y))
    owners = [n for n in graph.nodes if n.name == "Dy2StGradNode"]
    programs = [g for g in graph.groups if g.type == PROGRAM]
    assert len(owners) >= 2 and len(programs) == len(owners)
    for owner in owners:
        mine = [n for n in graph.nodes if n.kind == "program_op" and n.ptr == owner.ptr]
        assert mine and len({n.group for n in mine}) >= 1
        (group,) = [g for g in programs if g.id == f"p{owner.id[1:]}"]
        assert group.parent == owner.group
    eager = [n for n in graph.nodes if n.kind in ("op", "output") and n.name != "Dy2StGradNode"]
    assert {"MatmulGradNode", "AddGradNode"} <= {n.name for n in eager}


@requires_paddle_33
@requires_post_hooks
def test_problems_inside_a_to_static_model() -> None:
    model, static, x, doc = _traced("sqrt", stats=True)
    graph = Graph.from_dict(doc)
    found = find_problems(graph)
    by_kind = {p.kind: p for p in found}
    # The Inf is born inside the program, whose node received finite gradients: problems()
    # names the one op in it whose backward can make an Inf from finite values, sqrt_grad,
    # at the forward line of its sqrt.
    (owner,) = [n for n in graph.nodes if n.name == "Dy2StGradNode"]
    groups = {g.id: g for g in graph.groups}
    (sqrt,) = [n for n in graph.nodes if n.name == "sqrt_grad"]
    p = by_kind["nonfinite"]
    assert (p.node, p.name) == (sqrt.id, "sqrt_grad") and sqrt.ptr == owner.ptr
    assert "inside this compiled program" in p.reason
    assert sqrt.call_site is not None and p.site == f"{sqrt.call_site.file}:{sqrt.call_site.line}"
    source = Path(sqrt.call_site.file).read_text().splitlines()
    assert "return paddle.sqrt(x)" in source[sqrt.call_site.line - 1]
    # Oracles: the forward was finite and Paddle's own .grad is not (born in the backward);
    # the same model run eagerly gets the same op named by the eager rule.
    assert np.isfinite(static(x).numpy()).all()
    assert not np.isfinite(model.fc.weight.grad.numpy()).all()
    eager, ex = inputs("sqrt")
    with trace(eager, stats=True):
        ey = eager(ex)
        ey.sum().backward()
    (q,) = [q for q in find_problems(Graph.from_dict(build_graph(ey))) if q.kind == "nonfinite"]
    assert q.name == "SqrtGradNode"
    # The dead parameters are named with the model's names.
    zero = {p.name for p in found if p.kind == "zero"}
    assert zero == {"dead.weight", "dead.bias"}
    assert groups[sqrt.group or ""].type in (PROGRAM, "Sqrt")


@requires_paddle_33
@requires_post_hooks
def test_a_to_static_sublayer_sends_to_the_eager_ops_around_it() -> None:
    paddle.seed(0)
    model, x = Outer(), paddle.randn([3, 3])
    with trace(model, stats=True):
        y = model(x)
        y.sum().backward()
    graph = Graph.from_dict(build_graph(y))
    nodes = {n.id: n for n in graph.nodes}
    (owner,) = [n for n in graph.nodes if n.name == "Dy2StGradNode"]
    # The input's gradient leaves the program for the eager ReLU, from the op that made it.
    (to_relu,) = [e for e in graph.edges if e.source == owner.id
                  and nodes[e.target].name == "ReluGradNode"]  # fmt: skip
    assert to_relu.stats is not None  # what the ReLU node got, from this program alone
    (inside,) = [e for e in graph.edges if nodes[e.source].kind == "program_op"
                 and e.target == to_relu.target]  # fmt: skip
    assert nodes[inside.source].name == "matmul_grad" and inside.grad is not None
    assert inside.grad.shape == to_relu.grad.shape == (3, 4)
    # Parameters inside it carry the model's full names.
    leaving = [e for e in graph.edges if nodes[e.source].kind == "program_op"]
    named = {p.name for e in leaving if (p := nodes[e.target].param) is not None}
    assert named == {"mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias"}


@requires_paddle_33
def test_paddle_grad_through_a_program(capfd: pytest.CaptureFixture[str]) -> None:
    """paddle.grad returns the parameters' gradients without running their nodes: the log
    stays off from the program to the end, which is expected, not a log 'partly understood'."""
    model, x = inputs("mlp")
    static = paddle.jit.to_static(model, full_graph=True)
    capfd.readouterr()
    with trace(model):
        y = static(x)
        paddle.grad(y.sum(), list(model.parameters()))
    out, err = capfd.readouterr()
    assert "executed by pir interpreter" not in out + err and "Details:" not in err
    doc = build_graph(y)
    assert "notice" not in doc["meta"]
    assert [n for n in doc["nodes"] if n.get("kind") == "program_op"]
