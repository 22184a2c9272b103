"""trace(model, stats=True): every edge of build_graph(y) carries the statistics of the real
gradient of the traced backward, checked against ``.grad`` and tensor hooks; the first
NaN/Inf is located; zero-gradient parameters are flagged; steps=K keeps a bounded history."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from models import lenet_output
from paddle_versions import HAS_VLOG_SWITCH, requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import Graph, nested_dict, validate_graph_dict

pytestmark = requires_post_hooks  # 2.6 gets no statistics (the README says so)


def _param_edges(doc: dict) -> dict[str, list[dict]]:
    nested = nested_dict(doc)
    names = {n["id"]: n["param"]["name"] for n in nested["nodes"] if n["param"]}
    out: dict[str, list[dict]] = {}
    for e in nested["edges"]:
        if e["target"] in names:
            out.setdefault(names[e["target"]], []).append(e)
    return out


def test_every_parameter_edge_carries_the_norm_of_its_grad():
    paddle.seed(0)
    model, _ = lenet_output()
    with trace(model, stats=True):
        y = model(paddle.randn([2, 3, 32, 32]))
        y.square().mean().backward()
    doc = build_graph(y)
    validate_graph_dict(doc)
    assert doc["schema_version"] == "2.3"
    graph = Graph.from_dict(doc)
    assert all(e.stats is not None for e in graph.edges)
    for name, param in model.named_parameters():
        (edge,) = _param_edges(doc)[name]
        grad = param.grad.numpy().astype(np.float64)
        assert edge["stats"]["norm"] == pytest.approx(np.linalg.norm(grad), rel=1e-5)
        assert edge["stats"]["max_abs"] == pytest.approx(np.abs(grad).max(), rel=1e-5)
        assert edge["stats"]["nan"] == edge["stats"]["inf"] == 0
    assert "first_nonfinite" not in doc["meta"]
    if HAS_VLOG_SWITCH:  # 3.3: the slot log is captured around this backward
        # The reductions run inside the captured backward: their log lines are not Paddle's
        # account of the graph, and must not read as a partly understood log.
        assert "notice" not in doc["meta"] and "vlog" in doc["meta"]["annotations"]


def test_a_nan_born_in_the_backward_is_located_and_a_dead_parameter_flagged():
    paddle.seed(0)
    w = paddle.create_parameter([4], "float32")
    dead = paddle.create_parameter([4], "float32")
    x = paddle.to_tensor([0.0, 1.0, 2.0, 3.0])
    with trace(stats=True):
        loss = paddle.sqrt(x * w.abs()).sum() + (dead * 0.0).sum()
        loss.backward()
    doc = build_graph(loss)
    nodes = {n["id"]: n for n in nested_dict(doc)["nodes"]}
    assert nodes[doc["meta"]["first_nonfinite"]]["name"] == "SqrtGradNode"
    assert doc["meta"]["nonfinite_in_forward"] is False
    statuses = {n["ptr"]: n.get("grad_status") for n in nodes.values() if n["kind"] == "param"}
    dead_ptr = hex(int(dead.grad_fn.node_ptr())) if dead.grad_fn else None
    assert dead_ptr is None or statuses[dead_ptr] == "zero"
    assert "zero" in statuses.values()


def test_a_nan_the_forward_made_is_said_to_come_from_the_forward():
    w = paddle.create_parameter([3], "float32")
    with trace(stats=True):
        loss = (paddle.log(w * 0.0 - 1.0) * w).sum()  # log of a negative number: NaN
        loss.backward()
    doc = build_graph(loss)
    assert doc["meta"]["nonfinite_in_forward"] is True
    assert "first_nonfinite" in doc["meta"]


def test_steps_keep_a_bounded_history_of_norms_per_edge():
    paddle.seed(0)
    model, _ = lenet_output()
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    norms = []
    with trace(model, stats=True, steps=3) as session:
        for _ in range(5):
            y = model(paddle.randn([2, 3, 32, 32]))
            y.square().mean().backward()
            norms.append(float(np.linalg.norm(model.fc[4].weight.grad.numpy())))
            opt.step()
            opt.clear_grad()
    assert len(session.history) == 3 and session.history.count == 5
    doc = build_graph(y)
    steps = doc["meta"]["steps"]
    assert steps["index"] == [2, 3, 4]
    (edge,) = _param_edges(doc)["fc.4.weight"]
    assert steps["norm"][edge["id"]] == pytest.approx(norms[2:], rel=1e-5)


def test_steps_need_stats():
    with pytest.raises(ValueError, match="stats=True"):
        trace(steps=3)


def test_the_widget_lists_problems_in_words_and_summarizes_layers():
    from paddleviz_widget import GraphWidget

    paddle.seed(0)
    model, _ = lenet_output()
    model.fc[4].bias.stop_gradient = True
    with trace(model, stats=True):
        y = model(paddle.randn([2, 3, 32, 32]))
        (y * 0.0).sum().backward()  # every gradient is zero
    w = GraphWidget(y)
    found = w.problems()
    zero = {p.name for p in found if p.kind == "zero"}
    trainable = {n for n, p in model.named_parameters() if not p.stop_gradient}
    assert zero == trainable
    # Frozen by the user: information, listed apart from the problems.
    assert [(p.name, p.kind, p.severity) for p in found if p.kind in ("unreached", "frozen")] == [
        ("fc.4.bias", "frozen", "info")
    ]
    text = str(found)
    assert text.index("For information (not problems):") < text.index("stop_gradient=True")
    rows = {r.name: r for r in w.summary().rows}
    assert rows["fc.0"].params == 576 * 120 + 120


class _TwoHeads(paddle.nn.Layer):
    """Multi-task: one body, a head per task, alike op for op."""

    def __init__(self) -> None:
        super().__init__()
        self.body = paddle.nn.Linear(8, 16)
        self.head_a = paddle.nn.Linear(16, 1)
        self.head_b = paddle.nn.Linear(16, 1)

    def forward(self, x: paddle.Tensor, task: str) -> paddle.Tensor:
        head = self.head_a if task == "a" else self.head_b
        return head(paddle.nn.functional.relu(self.body(x)))


def test_steps_of_a_graph_reaching_other_parameters_are_not_its_history():
    """Steps alternate between two heads: their graphs have the same ops in the same order,
    but a head-A step is not in the history of head B's graph (its norms were shown on head
    B's edges). Oracle: each step's p.grad norms."""
    paddle.seed(0)
    model = _TwoHeads()
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    norms: dict[str, list[float]] = {"body.weight": [], "head_b.weight": []}
    with trace(model, stats=True, steps=4):
        for step in range(4):
            task = "ab"[step % 2]
            y = model(paddle.randn([8, 8]), task)
            y.square().mean().backward()
            for name in norms:
                grad = dict(model.named_parameters())[name].grad
                norms[name].append(np.nan if grad is None else float(np.linalg.norm(grad.numpy())))
            opt.step()
            opt.clear_grad()
    doc = build_graph(y)
    steps = doc["meta"]["steps"]
    assert steps["index"] == [1, 3]  # head B's steps only
    (edge,) = _param_edges(doc)["head_b.weight"]
    assert steps["norm"][edge["id"]] == pytest.approx([norms["head_b.weight"][s] for s in (1, 3)])
    (edge,) = _param_edges(doc)["body.weight"]
    assert steps["norm"][edge["id"]] == pytest.approx([norms["body.weight"][s] for s in (1, 3)])


def _critic() -> paddle.nn.Layer:
    paddle.seed(0)
    return paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.Tanh(), paddle.nn.Linear(8, 1))


def test_a_gradient_penalty_keeps_the_losss_steps():
    """WGAN-GP: each step's paddle.grad(create_graph=True) is a pass through another graph,
    and its higher-order GradNodes are named with a number Paddle counts up. The loss's steps
    stay its history, numbered as training steps. Oracle: each step's p.grad norm."""
    model = _critic()
    opt = paddle.optimizer.SGD(0.05, parameters=model.parameters())
    norms = []
    with trace(model, stats=True, steps=3):
        for _ in range(4):
            x = paddle.randn([5, 4])
            x.stop_gradient = False
            out = model(x)
            (g,) = paddle.grad(out.sum(), x, create_graph=True)
            loss = out.mean() + ((g.norm(axis=1) - 1) ** 2).mean()
            loss.backward()
            norms.append(float(np.linalg.norm(model[2].bias.grad.numpy().astype(np.float64))))
            opt.step()
            opt.clear_grad()
    doc = build_graph(loss)
    steps = doc["meta"]["steps"]
    assert steps["index"] == [1, 2, 3]
    (edge,) = _param_edges(doc)["2.bias"]  # one edge: the penalty does not reach it
    assert steps["norm"][edge["id"]] == pytest.approx(norms[1:], rel=1e-5)


def test_a_loop_of_paddle_grad_alone_numbers_its_own_steps():
    model = _critic()
    norms = []
    with trace(model, stats=True, steps=3):
        for _ in range(4):
            loss = model(paddle.randn([5, 4])).square().mean()
            grads = paddle.grad(loss, model.parameters(), retain_graph=True)
            norms.append(float(np.linalg.norm(grads[0].numpy().astype(np.float64))))
            with paddle.no_grad():
                for p, gp in zip(model.parameters(), grads):
                    p.set_value(p - 0.05 * gp)
    doc = build_graph(loss)
    steps = doc["meta"]["steps"]
    assert steps["index"] == [1, 2, 3]
    (edge,) = _param_edges(doc)["0.weight"]
    assert steps["norm"][edge["id"]] == pytest.approx(norms[1:], rel=1e-5)


def test_a_parameter_with_no_elements_is_not_said_to_get_no_gradient():
    """A [0, 3] parameter's gradient arrives (its .grad is a [0, 3] tensor), but Paddle hands
    the hooks an uninitialized tensor for it: it was flagged "none", listed by problems() and
    badged "∅ grad" in the page. A parameter really sent nothing is still flagged."""
    from paddleviz_widget import GraphWidget

    class Model(paddle.nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.fc = paddle.nn.Linear(3, 3)
            self.empty = self.create_parameter([0, 3])
            self.unused = self.create_parameter([3])

        def forward(self, x: paddle.Tensor) -> paddle.Tensor:
            return self.fc(x).sum() + self.empty.sum() + (self.unused * 0.0).sum()

    model = Model()
    with trace(model, stats=True):
        y = model(paddle.randn([2, 3]))
        y.backward()
    assert model.empty.grad is not None and model.empty.grad.shape == [0, 3]
    doc = nested_dict(build_graph(y))
    status = {n["param"]["name"]: n.get("grad_status") for n in doc["nodes"] if n["param"]}
    assert status["empty"] is None
    assert status["unused"] == "zero"  # the rules still run on the others
    assert [p.kind for p in GraphWidget(y).problems() if p.name == "empty"] == []
