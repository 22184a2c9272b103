"""problems() on real models: at least ten healthy models of different kinds get no problem
line, and each of the seven classic training bugs, planted in a small model of its own
(tests/problem_models.py), is named by the package alone: the layer path, the parameter or
GradNode, and for exploding/vanishing gradients the factor. The oracle is what each model
planted, and Paddle's own gradients (``.grad``) for the zeros."""

from __future__ import annotations

from typing import Any

import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F
import problem_models as pm
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import Graph, validate_graph_dict
from paddleviz_widget.graph.parts import GraphParts
from paddleviz_widget.graph.problems import Problem, find_problems, problems_text
from paddleviz_widget.graph.problems.flow import Flow, group_factor
from paddleviz_widget.graph.problems.thresholds import EXPLODING_FACTOR

pytestmark = requires_post_hooks


def _problems(doc: dict[str, Any]) -> list[Problem]:
    g = Graph.from_dict(doc)
    return find_problems(GraphParts(g.nodes, g.edges, g.groups, g.meta))


def _bug(name: str) -> tuple[Any, dict[str, Any], list[Problem]]:
    make, steps = pm.BUGS[name]
    model, doc = pm.traced(make, steps)
    validate_graph_dict(doc)
    found = _problems(doc)
    # The explorer reads the same findings from the document.
    assert doc["meta"]["problems"] == [p.to_dict() for p in found]
    return model, doc, [p for p in found if p.severity == "problem"]


@pytest.mark.parametrize("name", sorted(pm.HEALTHY))
def test_a_healthy_model_gets_no_problem_line(name: str) -> None:
    if name == "tiny_llama":
        pytest.importorskip("paddleformers")
    model, doc = pm.traced(pm.HEALTHY[name])
    found = _problems(doc)
    assert [p.line() for p in found if p.severity == "problem"] == []
    assert problems_text(found).startswith("No problems found")
    # BatchNorm's running statistics are never mentioned, not even as information.
    assert not any(p.name.endswith(("_mean", "_variance")) for p in found)
    # And not by a hair: every layer's growth factor is well under the threshold.
    g = Graph.from_dict(doc)
    flow = Flow.of(GraphParts(g.nodes, g.edges, g.groups, g.meta))
    owning = {chain[0] for chain in flow.chain.values() if chain}
    factors = [f for gid in owning if (f := group_factor(flow, gid)) is not None]
    assert factors and max(factors) < EXPLODING_FACTOR / 4


def test_a_nan_born_in_the_backward_names_its_layer_and_gradnode() -> None:
    _, _, (p,) = _bug("nan_in_backward")
    assert (p.kind, p.layer, p.name) == ("nonfinite", "block", "SqrtGradNode")
    assert "made here from finite ones" in p.reason
    assert p.site is not None and p.site.startswith(pm.__file__)


def test_a_nan_made_in_the_forward_names_the_layer_and_its_log() -> None:
    _, doc, (p,) = _bug("nan_in_forward")
    assert (p.kind, p.layer, p.name) == ("nonfinite", "block", "LogGradNode")
    assert doc["meta"]["forward_nonfinite"]["layer"] == "block"
    assert doc["meta"]["forward_nonfinite"]["inputs_finite"] is True
    assert "loss was already" not in p.reason


def test_an_unused_layer_and_a_detached_branch_are_unreached() -> None:
    for name, layer in (("unused_layer", "spare"), ("detached_branch", "gate")):
        _, _, found = _bug(name)
        assert {(p.kind, p.layer, p.name) for p in found} == {
            ("unreached", layer, f"{layer}.weight"), ("unreached", layer, f"{layer}.bias")
        }  # fmt: skip


def test_dead_relus_name_where_the_zeros_start_and_the_rest_as_affected() -> None:
    model, _, found = _bug("dead_relu")
    (p,) = found  # one problem, not one per parameter
    assert (p.kind, p.layer, p.name) == ("zero", "5", "ReluGradNode")
    zero = {n for n, q in model.named_parameters() if not np.abs(q.grad.numpy()).any()}
    assert zero == set(p.affected)  # Paddle's own .grad: exactly these are all zeros
    assert {"0.weight", "2.weight", "4.bias"} <= zero


def test_an_exploding_initialisation_names_the_scaled_layer_with_its_factor() -> None:
    model, _, found = _bug("exploding_init")
    (p,) = found
    assert (p.kind, p.layer) == ("exploding", "6")  # the Linear whose weights are x1000
    assert p.factor is not None and 300 < p.factor < 3000
    assert f"x{p.factor:.3g}" in p.line()
    # What sorting by norm would say (Paddle's own .grad): the layers behind the culprit have
    # far larger weight gradients than it has; only the growth factor points at it.
    norms = {k: float(np.linalg.norm(model[k].weight.grad.numpy())) for k in range(0, 11, 2)}
    assert max(norms, key=norms.__getitem__) < 6 and norms[4] > 100 * norms[6]


def test_a_normalisation_that_blows_the_gradient_up_is_explained_as_one() -> None:
    """BatchNorm over near-constant inputs (a Linear with weights x1e-3 before it) multiplies
    the gradient by 1/spread: still reported, with that cause, not "weights too large"."""

    def make() -> pm.Made:
        model = nn.Sequential(nn.Linear(16, 16), nn.BatchNorm1D(16), nn.Linear(16, 4))
        with paddle.no_grad():
            model[0].weight.set_value(model[0].weight * 1e-3)
            model[0].bias.set_value(paddle.zeros([16]))
        return model, lambda: paddle.randn([8, 16]), lambda y: y.square().mean()

    _, doc = pm.traced(make, 1)
    found = [p for p in _problems(doc) if p.kind == "exploding"]
    assert [(p.layer, p.name) for p in found] == [("1", "BatchNormGradNode")], found
    assert found[0].factor is not None and found[0].factor > EXPLODING_FACTOR
    assert "a normalisation multiplies the gradient" in found[0].reason
    assert "weights initialised" not in found[0].reason
    # A Linear's growth keeps the weights' explanation.
    (linear,) = _bug("exploding_init")[2]
    assert "weights initialised or grown too large?" in linear.reason


def test_vanishing_through_saturated_sigmoids_names_the_layers_and_the_op() -> None:
    model, _, found = _bug("vanishing_sigmoid")
    (p,) = found
    assert p.kind == "vanishing" and p.name == "SigmoidGradNode"
    assert p.layer == "1"  # the sigmoid after the first Linear, which sees inputs x1e3
    assert "0" in p.affected and p.factor is not None and p.factor < 1e-4
    # Paddle's own .grad agrees: the first layer gets < 1e-4 of the last layer's gradient.
    first, last = (np.linalg.norm(model[k].weight.grad.numpy()) for k in (0, 22))
    assert first < 1e-4 * last


def test_the_forward_check_changes_no_output_gradient_or_random_state() -> None:
    """trace(model, stats=True)'s per-layer finiteness check only reads: the dropout model's
    loss, every .grad and the next random numbers are bitwise those of a plain run."""
    import paddle

    from paddleviz_widget import trace

    def run(traced: bool) -> tuple[Any, dict[str, Any], Any]:
        paddle.seed(0)
        model, batch, loss_of = pm.dropout()
        x = batch()
        if traced:
            with trace(model, stats=True):
                loss = loss_of(model(x))
                loss.backward()
        else:
            loss = loss_of(model(x))
            loss.backward()
        grads = {n: p.grad.numpy() for n, p in model.named_parameters()}
        return loss.numpy(), grads, paddle.rand([4]).numpy()

    plain, traced = run(False), run(True)
    assert plain[0].tobytes() == traced[0].tobytes()
    assert all(plain[1][n].tobytes() == traced[1][n].tobytes() for n in plain[1])
    assert plain[2].tobytes() == traced[2].tobytes()


def test_the_device_side_check_names_the_same_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off the CPU each layer's check is a flag left on the device and read once when the
    backward starts; made to take that path here, it names the same culprit."""
    from paddleviz_widget.tracer.capture import forward_finite

    monkeypatch.setattr(forward_finite, "cpu_finite", lambda t, dtype=None: None)
    _, doc, (p,) = _bug("nan_in_forward")
    assert (p.kind, p.layer, p.name) == ("nonfinite", "block", "LogGradNode")
    assert doc["meta"]["forward_nonfinite"]["inputs_finite"] is True


class SpectralConv(nn.Layer):
    """A convolution whose weight goes through nn.SpectralNorm (its power-iteration vectors
    weight_u/weight_v are parameters Paddle keeps with stop_gradient=True by design), and a
    head the test freezes on purpose."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2D(2, 4, 3)
        self.norm = nn.SpectralNorm(self.conv.weight.shape, dim=0, power_iters=2)
        self.head = nn.Linear(4, 1)
        self.head.bias.stop_gradient = True

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = F.conv2d(x, self.norm(self.conv.weight), self.conv.bias)
        return self.head(h.mean(axis=[2, 3]))


def test_spectral_norms_vectors_are_not_called_frozen() -> None:
    paddle.seed(0)
    model = SpectralConv()
    assert {n for n, p in model.named_parameters() if p.stop_gradient} == {
        "norm.weight_u", "norm.weight_v", "head.bias"
    }  # fmt: skip
    with trace(model, stats=True):
        loss = model(paddle.randn([2, 2, 6, 6])).square().mean()
        loss.backward()
    found = _problems(build_graph(loss))
    assert [(p.kind, p.name) for p in found] == [("frozen", "head.bias")]
