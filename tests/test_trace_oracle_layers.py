"""Oracle, part 2: layer groups and parameter names through the public API, and the graphs
built without trace(): replayed before backward (checked against a later dump) and after an
uncaptured backward freed the graph.

Expected groups come from the model itself: forward hooks (the test's own) record each layer
call's input and output GradNodes; an op belongs to the innermost layer whose call reaches it
walking back from the call's outputs to its inputs. A parameter belongs to the layer that
owns it under its ``named_parameters()`` name.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F
import pytest
from graph_dicts import nested, nested_graph
from oracle_models import (
    assert_matches_dump,
    lenet_and_input,
    nested_and_input,
    ptr_of,
    read_dump,
    restrict_dump,
    tied_and_input,
    transformer_and_input,
)
from paddle_versions import requires_dump

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import validate_graph_dict
from paddleviz_widget.tracer.read.grad_node import grad_node_of

ACCUMULATION = "GradNodeAccumulation"


class LayerCalls:
    """Forward hooks on every sublayer: (path, input GradNode ptrs, output GradNodes)."""

    def __init__(self, model: nn.Layer) -> None:
        self.calls: list[tuple[str, set[int], list[Any]]] = []
        self._inputs: list[set[int]] = []
        self._handles = []
        for path, layer in model.named_sublayers(include_self=True):
            self._handles.append(layer.register_forward_pre_hook(self._pre))
            self._handles.append(layer.register_forward_post_hook(self._post(path)))

    @staticmethod
    def _nodes(obj: Any) -> list[Any]:
        if isinstance(obj, paddle.Tensor):
            node = grad_node_of(obj)
            return [node] if node is not None else []
        if isinstance(obj, (list, tuple)):
            return [n for item in obj for n in LayerCalls._nodes(item)]
        return []

    def _pre(self, layer: Any, args: Any) -> None:
        self._inputs.append({int(n.node_ptr()) for n in self._nodes(args)})

    def _post(self, path: str) -> Any:
        def hook(layer: Any, args: Any, outputs: Any) -> None:
            self.calls.append((path, self._inputs.pop(), self._nodes(outputs)))

        return hook

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()

    def innermost_path(self) -> dict[str, str]:
        """Op GradNode ptr (hex) -> path of the innermost layer whose call created it."""
        best: dict[str, str] = {}
        for path, inputs, outputs in self.calls:
            stack, seen = list(outputs), set()
            while stack:
                node = stack.pop()
                ptr = int(node.node_ptr())
                if ptr in seen or ptr in inputs or node.name() == ACCUMULATION:
                    continue
                seen.add(ptr)
                key = hex(ptr)
                if key not in best or _depth(path) > _depth(best[key]):
                    best[key] = path
                stack.extend(n for n in node.next_functions if n is not None)
        return best


def _depth(path: str) -> int:
    return path.count(".") if path else -1


def assert_groups(graph: dict[str, Any], model: nn.Layer, calls: LayerCalls) -> None:
    groups = {g["id"]: g for g in graph["groups"]}
    assert groups, f"no layer groups; annotations: {graph['meta']['annotations']}"
    assert len(groups) == len(graph["groups"])
    # A tree: one root, named after the model's class; every other group is a sublayer path
    # whose parent is the group of the enclosing path.
    sublayers = dict(model.named_sublayers(include_self=True))
    (root,) = [g for g in groups.values() if g["parent"] is None]
    assert (root["name"], root["type"]) == (type(model).__name__, type(model).__name__)
    path_of = {gid: "" if g is root else g["name"] for gid, g in groups.items()}
    for gid, group in groups.items():
        if group is root:
            continue
        path = path_of[gid]
        assert path in sublayers, path
        assert group["type"] == type(sublayers[path]).__name__
        assert group["parent"] in groups
        assert path_of[group["parent"]] == (path.rsplit(".", 1)[0] if "." in path else "")

    owner_of = {ptr_of(p): name for name, p in model.named_parameters() if not p.stop_gradient}
    innermost = calls.innermost_path()
    used = set()
    for node in graph["nodes"]:
        if node["kind"] == "param":
            name = owner_of[node["ptr"]]
            assert node["param"]["name"] == name
            expected = name.rsplit(".", 1)[0] if "." in name else ""
        else:
            expected = innermost.get(node["ptr"])  # None: an op outside the model (the loss)
        actual = None if node["group"] is None else path_of[node["group"]]
        assert actual == expected, (node["name"], node["ptr"])
        used.add(node["group"])
    # Only groups that hold a node, and their ancestors, are listed.
    listed = set()
    for gid in used - {None}:
        while gid is not None:
            listed.add(gid)
            gid = groups[gid]["parent"]
    assert listed == set(groups)


def _traced_with_calls(model: nn.Layer, x: paddle.Tensor) -> tuple[Any, Any, LayerCalls]:
    calls = LayerCalls(model)
    try:
        with trace(model):
            y = model(x)
            loss = y.sum()
            loss.backward()
    finally:
        calls.remove()
    return y, loss, calls


@pytest.mark.parametrize("root", ["y", "loss"])
@pytest.mark.parametrize("make", [nested_and_input, lenet_and_input], ids=["nested", "lenet"])
def test_groups_follow_the_layer_tree(make, root):
    model, x = make()
    y, loss, calls = _traced_with_calls(model, x)
    doc = build_graph(y if root == "y" else loss)
    validate_graph_dict(json.loads(json.dumps(doc)))
    graph = nested(doc)
    assert "layers" in graph["meta"]["annotations"]
    assert_groups(graph, model, calls)


def test_tied_parameter_sits_in_its_first_owners_group():
    model, ids = tied_and_input()
    y, _, calls = _traced_with_calls(model, ids)
    graph = nested_graph(y)
    assert_groups(graph, model, calls)
    (node,) = [n for n in graph["nodes"] if n["ptr"] == ptr_of(model.emb.weight)]
    assert node["param"]["name"] == "emb.weight"


class SmallMLP(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.body(x)


def test_small_model_keeps_its_groups_when_built_from_the_loss():
    paddle.seed(0)
    model = SmallMLP()
    calls = LayerCalls(model)
    try:
        with trace(model):
            y = model(paddle.randn([3, 4]))
            loss = F.mse_loss(y, paddle.zeros([3, 2]))
            loss.backward()
    finally:
        calls.remove()
    assert_groups(nested_graph(y), model, calls)  # passes: every op is the model's
    assert_groups(nested_graph(loss), model, calls)


# -- without trace(): the replay before backward, and the graph after an uncaptured backward --

REPLAY_MODELS = [lenet_and_input, transformer_and_input]


def _grads(model: nn.Layer) -> dict[str, Any]:
    return {
        n: None if p.grad is None else p.grad.numpy().copy() for n, p in model.named_parameters()
    }


@requires_dump
@pytest.mark.parametrize("earlier_backward", [False, True], ids=["fresh", "grads_set"])
@pytest.mark.parametrize("make", REPLAY_MODELS, ids=["lenet", "transformer"])
def test_replay_before_backward_matches_the_later_dump(make, earlier_backward, tmp_path):
    model, x = make()
    if earlier_backward:
        model(x * 0.5).sum().backward()
    before = _grads(model)
    y = model(x)

    doc = build_graph(y)  # no trace: replays the backward once, side-effect free
    graph = nested(doc)

    after = _grads(model)
    assert after.keys() == before.keys()
    for name, grad in before.items():
        if grad is None:
            assert after[name] is None, name
        else:
            assert np.array_equal(after[name], grad), name
    assert all(e["grad"] is not None for e in graph["edges"])
    assert "notice" not in graph["meta"]
    validate_graph_dict(json.loads(json.dumps(doc)))

    y.sum().backward(dump_backward_graph_path=str(tmp_path))  # the graph is still alive
    assert_matches_dump(graph, restrict_dump(read_dump(tmp_path), [ptr_of(y)]))


@requires_dump
@pytest.mark.parametrize("make", REPLAY_MODELS, ids=["lenet", "transformer"])
def test_after_an_uncaptured_backward_the_structure_is_whole(make, tmp_path):
    model, x = make()
    y = model(x)
    y.sum().backward(dump_backward_graph_path=str(tmp_path))  # no trace, no retain_graph
    dump = restrict_dump(read_dump(tmp_path), [ptr_of(y)])

    doc = build_graph(y, model=model)

    validate_graph_dict(json.loads(json.dumps(doc)))
    graph = nested(doc)
    assert graph["meta"]["notice"]
    assert {n["ptr"]: n["name"] for n in graph["nodes"]} == dump.nodes
    ptr = {n["id"]: n["ptr"] for n in graph["nodes"]}
    pairs = sorted((ptr[e["source"]], ptr[e["target"]]) for e in graph["edges"])
    assert pairs == sorted((e.source, e.target) for e in dump.edges)

    params = {ptr_of(p): (name, p) for name, p in model.named_parameters()}
    label = {(e.source, e.target): e.grad for e in dump.edges if e.target in params}
    param_nodes = [n for n in graph["nodes"] if n["kind"] == "param"]
    assert {n["ptr"] for n in param_nodes} == set(params)
    for node in param_nodes:
        name, param = params[node["ptr"]]
        assert node["param"]["name"] == name
        for edge in (e for e in graph["edges"] if e["target"] == node["id"]):
            assert edge["grad"]["shape"] == list(param.shape)
            dumped = label[(ptr[edge["source"]], node["ptr"])]
            assert (edge["grad"]["dtype"], tuple(edge["grad"]["shape"])) == (
                dumped.dtype,
                dumped.shape,
            )
