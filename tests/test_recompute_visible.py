"""Recompute made visible: each RecomputeFunction node sits in the group of the decoder layer it
recomputes, lists the parameters it hides, and the widget says so in one line. Real model code:
paddleformers' Llama with its own recompute schedule, traced and untraced."""

from __future__ import annotations

import contextlib

import paddle
import pytest
from llama_tiny import tiny_llama
from paddle_versions import requires_paddleformers

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import validate_graph_dict

pytestmark = requires_paddleformers


def _graph(traced: bool, after_backward: bool) -> tuple[object, dict]:
    paddle.seed(0)
    model, ids = tiny_llama(recompute=True, layers=3)
    with trace(model) if traced else contextlib.nullcontext():
        loss = model(ids)[0].astype("float32").square().mean()
        if after_backward:
            loss.backward()
    doc = build_graph(loss)
    validate_graph_dict(doc)
    return model, doc


@pytest.mark.parametrize(("traced", "after_backward"), [(False, False), (True, True)])
def test_each_recompute_node_names_its_layer_and_the_parameters_it_hides(traced, after_backward):
    model, doc = _graph(traced, after_backward)
    groups = {g["id"]: g for g in doc["groups"]}
    nodes = {n["id"]: n for n in doc["nodes"]}
    entries = doc["meta"]["pylayers"]
    assert len(entries) == 3 and {e["class"] for e in entries} == {"RecomputeFunction"}
    # The independent account: the model's own decoder layers and their trainable parameters.
    expected = {
        f"model.layers.{i}": sorted(
            f"model.layers.{i}.{name}"
            for name, p in layer.named_parameters()
            if not p.stop_gradient
        )
        for i, layer in enumerate(model.model.layers)
    }
    seen = {}
    for entry in entries:
        node = nodes[entry["node"]]
        assert node["name"] == "GradNodePyLayer_RecomputeFunction"
        assert groups[node["group"]]["name"] == entry["layer"]
        assert groups[node["group"]]["type"] == entry["layer_type"] == "LlamaDecoderLayer"
        seen[entry["layer"]] = sorted(p["name"] for p in entry["hidden_params"])
    assert seen == expected
    # None of the hidden parameters has a node of its own in this graph.
    shown = {n["param"]["name"] for n in doc["nodes"] if "param" in n}
    assert not shown & {name for names in expected.values() for name in names}
    notices = doc["meta"].get("notices") or [doc["meta"]["notice"]]
    line = next(n for n in notices if n.startswith("Recompute hides"))
    assert "3 layer(s)" in line and f"{sum(map(len, expected.values()))} parameter(s)" in line


def test_after_a_plain_backward_the_notice_still_says_what_recompute_hides():
    """backward() releases the recompute contexts (which layer each node ran): the nodes stay
    unnamed rather than guessed, and the line counts what the graph does not show."""
    model, doc = _graph(traced=False, after_backward=True)
    assert all("layer" not in e for e in doc["meta"]["pylayers"])
    hidden = sum(
        1
        for layer in model.model.layers
        for _, p in layer.named_parameters()
        if not p.stop_gradient
    )
    line = next(n for n in doc["meta"]["notices"] if n.startswith("Recompute hides"))
    assert "3 RecomputeFunction node(s)" in line and f"({hidden} trainable" in line


def test_without_recompute_there_is_nothing_to_say():
    paddle.seed(0)
    model, ids = tiny_llama(recompute=False)
    doc = build_graph(model(ids)[0].astype("float32").square().mean())
    assert "pylayers" not in doc["meta"]
    assert not any(n.startswith("Recompute") for n in doc["meta"].get("notices", []))
