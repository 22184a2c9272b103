"""When the costly VLOG slot log is captured: small graphs by default, big ones on request."""

from __future__ import annotations

import paddle
import paddle.nn as nn
import pytest
from paddle_versions import requires_paddle_33

from paddleviz_widget import trace
from paddleviz_widget.tracer.build import trace_graph
from paddleviz_widget.tracer.capture.session import SLOT_LOG_MAX_NODES

pytestmark = requires_paddle_33


def _deep_mlp(blocks: int) -> tuple[nn.Layer, paddle.Tensor]:
    layers: list[nn.Layer] = []
    for _ in range(blocks):
        layers += [nn.Linear(4, 4), nn.ReLU()]
    return nn.Sequential(*layers), paddle.randn([2, 4])


@pytest.fixture(scope="module")
def big() -> tuple[nn.Layer, paddle.Tensor]:
    model, x = _deep_mlp(blocks=SLOT_LOG_MAX_NODES // 4)  # 5 GradNodes a block
    return model, x


def _traced(model: nn.Layer, x: paddle.Tensor, **kwargs: bool):
    with trace(model, **kwargs):
        y = model(x)
        y.sum().backward()
    return trace_graph(y)


def test_a_big_graph_gets_edge_gradients_but_no_slot_log_by_default(big):
    graph = _traced(*big)
    assert len(graph.nodes) > SLOT_LOG_MAX_NODES
    assert "vlog" not in graph.meta["annotations"] and "dump" in graph.meta["annotations"]
    assert all(e.grad is not None and e.grad.shape for e in graph.edges)
    assert not any(n.inputs or n.outputs for n in graph.nodes)


def test_slots_true_captures_the_slot_log_at_any_size(big):
    graph = _traced(*big, slots=True)
    assert "vlog" in graph.meta["annotations"]
    ops = [n for n in graph.nodes if n.kind != "param"]
    assert all(n.inputs for n in ops)
    assert {s.name for n in ops if n.name == "MatmulGradNode" for s in n.inputs} >= {"x", "y"}


def test_a_small_graph_gets_the_slot_log_by_default():
    graph = _traced(*_deep_mlp(blocks=2))
    assert len(graph.nodes) <= SLOT_LOG_MAX_NODES
    assert "vlog" in graph.meta["annotations"]
    assert all(n.outputs for n in graph.nodes if n.kind == "op")


def test_without_trace_a_big_graph_is_replayed_without_the_slot_log(big):
    model, x = big
    graph = trace_graph(model(x))
    # Replayed with the dump alone (groups come from parameter ownership: no trace()).
    assert set(graph.meta["annotations"]) == {"dump", "layers-inferred"}
    assert all(e.grad is not None for e in graph.edges)
