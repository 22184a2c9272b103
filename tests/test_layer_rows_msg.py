"""The kernel side of the explorer's Layers tab: the page sends a custom message, the widget
answers with the per-layer rows of graph/summary.py as plain JSON. Driven through the widget's
comm, as Jupyter delivers it; parameter counts checked against the model's own parameters."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import paddle
from comm.base_comm import BaseComm
from models import LeNet
from paddle_versions import requires_paddle_33

from paddleviz_widget import trace
from paddleviz_widget.export.layer_rows import LAYER_ROWS, layer_rows
from paddleviz_widget.graph import Graph
from paddleviz_widget.graph.parts import GraphParts
from paddleviz_widget.graph.summary import summarize
from paddleviz_widget.widget import GraphWidget


class WireComm(BaseComm):
    """A comm whose wire is a list: what the widget publishes to the page."""

    def __init__(self, **kwargs: Any) -> None:
        self.published: list[tuple[str, Any]] = []
        super().__init__(target_name="jupyter.widget", **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, *args: Any, **kwargs: Any) -> None:
        self.published.append((msg_type, json.loads(json.dumps(data))))  # as the wire carries it


def from_page(w: GraphWidget, content: Any) -> list[Any]:
    """Deliver a custom message from the page; return the custom messages sent back."""
    wire = w.comm
    before = len(wire.published)
    wire.handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})
    return [d["content"] for t, d in wire.published[before:] if d.get("method") == "custom"]


def traced_lenet() -> tuple[LeNet, paddle.Tensor]:
    paddle.seed(0)
    model = LeNet()
    with trace(model):
        y = model(paddle.randn([2, 3, 32, 32]))
        y.sum().backward()
    return model, y


def test_the_rows_are_the_summary_and_count_the_models_parameters() -> None:
    model, y = traced_lenet()
    w = GraphWidget(y, comm=WireComm())
    (reply,) = from_page(w, {"type": LAYER_ROWS, "id": 7})
    assert reply["type"] == LAYER_ROWS and reply["id"] == 7 and "error" not in reply

    g = Graph.from_dict(w.graph)
    table = summarize(GraphParts(g.nodes, g.edges, g.groups, g.meta))
    assert reply["rows"] == json.loads(json.dumps([asdict(r) for r in table.rows]))

    def size(layer: paddle.nn.Layer) -> int:
        return sum(int(p.numel()) for p in layer.parameters())

    sizes = {name: size(layer) for name, layer in model.named_sublayers()}
    total = size(model)
    assert total == 81_302  # LeNet's, as the seed documents it
    names = set()
    for row in reply["rows"]:
        want = total if row["depth"] == 0 else sizes[row["name"]]
        assert (row["params"], row["trainable"]) == (want, want), row["name"]
        names.add(row["name"])
    # Every layer that holds parameters has its row, and the totals are the model's.
    assert {n for n, s in sizes.items() if s > 0} <= names
    assert (reply["total_params"], reply["trainable_params"]) == (total, total)


@requires_paddle_33  # older Paddle gives gradient shapes only with GLOG_v set before import
def test_the_rows_carry_the_gradients_a_layer_receives_and_sends() -> None:
    _, y = traced_lenet()
    (reply,) = from_page(GraphWidget(y, comm=WireComm()), {"type": LAYER_ROWS, "id": 8})
    fc2 = next(r for r in reply["rows"] if r["name"] == "fc.2")
    assert fc2["grads_in"] == ["float32[2, 84]"] and fc2["grads_out"] == ["float32[2, 120]"]


def test_names_travel_as_they_are() -> None:
    model, y = traced_lenet()
    graph = GraphWidget(y).graph
    graph["groups"][1]["name"] = '<img src=x onerror="alert(1)"> & \\N'
    rows = layer_rows(graph)["rows"]
    assert rows[1]["name"] == '<img src=x onerror="alert(1)"> & \\N'  # the page shows text


def test_other_messages_are_left_alone_and_a_broken_graph_gets_a_reason() -> None:
    _, y = traced_lenet()
    good = GraphWidget(y, comm=WireComm())
    assert from_page(good, {"type": "someone-else", "id": 1}) == []
    assert from_page(good, ["not", "a", "dict"]) == []
    broken = {**good.graph, "schema_version": "9.9"}  # what Graph.from_dict refuses
    w = GraphWidget.from_graph(broken, comm=WireComm())
    (reply,) = from_page(w, {"type": LAYER_ROWS, "id": 2})
    assert reply["id"] == 2 and "rows" not in reply
    assert reply["error"].startswith("the layer table could not be made")
    assert "9.9" in reply["error"]


def test_the_widget_computes_nothing_until_asked(monkeypatch: Any) -> None:
    calls: list[int] = []
    import paddleviz_widget.export.layer_rows as widget_layers

    real = widget_layers.summarize
    monkeypatch.setattr(widget_layers, "summarize", lambda *a: calls.append(1) or real(*a))
    _, y = traced_lenet()
    w = GraphWidget(y, comm=WireComm())
    assert calls == []
    from_page(w, {"type": LAYER_ROWS, "id": 1})
    assert calls == [1]
