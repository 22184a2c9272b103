"""Oracle: inside ``trace()``, build_graph(what backward was called on) equals Paddle's own
backward dump of that same backward (nodes, edge multiset, every edge's gradient), for models
that stress the graph: residual nets, tied weights, several outputs, cut branches, PyLayer,
LSTM, attention, in-place ops and a double backward.

Each test passes its own ``dump_backward_graph_path`` to the backward: the user's dump must
still be written, and it is the oracle.
"""

from __future__ import annotations

import collections
import json
from typing import Any

import paddle
import pytest
from graph_dicts import nested, nested_graph
from oracle_models import (
    CASES,
    Case,
    Cube,
    assert_matches_dump,
    lenet_and_input,
    ptr_of,
    pylayer,
    read_dump,
    restrict_dump,
)
from paddle_versions import requires_dump

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import validate_graph_dict

pytestmark = requires_dump


def traced(case: Case, tmp_path: Any) -> tuple[Any, dict[str, Any], Any]:
    """Forward + backward inside trace(); (backward's root(s), build_graph of them checked
    against the schema and read back nested, the dump)."""
    with trace(case.model):
        root = case.run(str(tmp_path))
    dump = read_dump(tmp_path)  # the user's own dump directory still got its dump
    doc = build_graph(root)
    validate_graph_dict(json.loads(json.dumps(doc)))
    return root, nested(doc), dump


def _roots(root: Any) -> list[paddle.Tensor]:
    return list(root) if isinstance(root, (list, tuple)) else [root]


def _by_ptr(graph: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["ptr"]: n for n in graph["nodes"]}


def _edges_into(graph: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in graph["edges"] if e["target"] == node["id"]]


def _expected_params(name: str, case: Case) -> dict[str, paddle.Tensor]:
    """Parameters whose gradient the backward computes (first owner's name for tied ones)."""
    params = {n: p for n, p in case.model.named_parameters() if not p.stop_gradient}
    if name == "branch_cut":  # only the trunk is reached; the cut branches are not
        params = {n: p for n, p in params.items() if n.startswith("trunk.")}
    return params


def check_tied(case: Case, graph: dict[str, Any], dump: Any) -> None:
    weight = case.model.emb.weight
    node = _by_ptr(graph)[ptr_of(weight)]
    (owner,) = [n for n, p in case.model.named_parameters() if p is weight]
    assert node["param"]["name"] == owner
    into = _edges_into(graph, node)
    assert len(into) == len({e["source"] for e in into}) == 2  # lookup and output projection
    assert all(e["grad"]["shape"] == list(weight.shape) for e in into)


def check_two_outputs_summed(case: Case, graph: dict[str, Any], dump: Any) -> None:
    a, b = case.kept["a"], case.kept["b"]
    heads = nested_graph((a, b))  # the part of the same backward below the two outputs
    assert_matches_dump(heads, restrict_dump(dump, [ptr_of(a), ptr_of(b)]))
    outputs = {n["ptr"] for n in heads["nodes"] if n["kind"] == "output"}
    assert outputs == {ptr_of(a), ptr_of(b)}


def check_branch_cut(case: Case, graph: dict[str, Any], dump: Any) -> None:
    cut = case.kept["cut_nodes"]
    assert len(cut) == 2 and all(node is not None for node in cut)
    absent = {hex(int(node.node_ptr())) for node in cut}
    model = case.model
    absent |= {ptr_of(p) for p in (*model.detached.parameters(), *model.frozen.parameters())}
    assert model.gain.stop_gradient and model.gain.grad is None
    assert absent.isdisjoint(_by_ptr(graph)) and absent.isdisjoint(dump.nodes)


def check_pylayer(case: Case, graph: dict[str, Any], dump: Any) -> None:
    (node,) = [n for n in graph["nodes"] if Cube.__name__ in n["name"]]
    # Cube.apply takes one tensor: one gradient out of the PyLayer, into the fc's last op
    (edge,) = [e for e in graph["edges"] if e["source"] == node["id"]]
    assert edge["grad"]["shape"][-1] == case.model.fc.weight.shape[1]


def check_inplace(case: Case, graph: dict[str, Any], dump: Any) -> None:
    # h was changed in place (add_, tanh_): its grad_fn is the last in-place op's node
    assert ptr_of(case.kept["h"]) in _by_ptr(graph)


def check_double_backward(case: Case, graph: dict[str, Any], dump: Any) -> None:
    nodes = _by_ptr(graph)
    kept = case.kept
    # z's graph runs through the first backward's graph (g) and the forward's (y) to x
    assert {ptr_of(kept["g"]), ptr_of(kept["y"]), ptr_of(kept["x"])} <= set(nodes)
    assert nodes[ptr_of(kept["x"])]["kind"] == "param"


CHECKS = {
    "tied": check_tied,
    "two_outputs_summed": check_two_outputs_summed,
    "branch_cut": check_branch_cut,
    "pylayer": check_pylayer,
    "inplace": check_inplace,
    "double_backward": check_double_backward,
}


@pytest.mark.parametrize("name", list(CASES))
def test_traced_graph_equals_paddles_dump(name, tmp_path):
    case = CASES[name]()
    root, graph, dump = traced(case, tmp_path)

    assert_matches_dump(graph, dump)  # traced() has checked the document against the schema
    assert "dump" in graph["meta"]["annotations"]
    assert "notice" not in graph["meta"]

    roots = _roots(root)
    outputs = [n for n in graph["nodes"] if n["kind"] == "output"]
    assert [n["ptr"] for n in outputs] == [ptr_of(r) for r in roots]
    assert [o["node"] for o in graph["meta"]["outputs"]] == [n["id"] for n in outputs]

    nodes = _by_ptr(graph)
    params = _expected_params(name, case)
    named = {nodes[ptr_of(p)]["param"]["name"]: p for p in params.values()}
    assert named.keys() == params.keys()  # every reached parameter, by its structured name
    for node in (nodes[ptr_of(p)] for p in params.values()):
        param = params[node["param"]["name"]]
        assert node["kind"] == "param"
        assert node["param"]["shape"] == list(param.shape)
        for edge in _edges_into(graph, node):
            assert edge["grad"]["shape"] == list(param.shape)
    check = CHECKS.get(name)
    if check is not None:
        check(case, graph, dump)


def test_backward_on_a_list_dumps_one_graph_with_both_roots(tmp_path):
    case = CASES["two_outputs_listed"]()
    roots, graph, dump = traced(case, tmp_path)
    reached = {p: restrict_dump(dump, [ptr_of(r)]).nodes for p, r in zip("ab", roots)}
    assert reached["a"].keys() != reached["b"].keys()
    assert set(dump.nodes) == reached["a"].keys() | reached["b"].keys()
    assert len(graph["meta"]["outputs"]) == 2
    counts = collections.Counter(n["kind"] for n in graph["nodes"])
    assert counts["output"] == 2


def test_pylayer_backward_log_stays_out_of_the_users_stderr(tmp_path, capfd):
    traced(pylayer(), tmp_path)
    err = capfd.readouterr().err
    assert "Cube.apply" not in err, err


def test_large_graph_mode_takes_edges_from_the_dump_alone(tmp_path):
    """trace(slots=False) — what big graphs get by default — skips the costly VLOG: every edge
    still equals the dump, only the slot names are missing."""
    model, _ = lenet_and_input()
    with trace(model, slots=False):
        loss = model(paddle.randn([1, 3, 32, 32])).sum()
        loss.backward(dump_backward_graph_path=str(tmp_path))
    graph = nested_graph(loss)
    assert_matches_dump(graph, read_dump(tmp_path))
    assert graph["meta"]["annotations"] == ["dump", "layers"]
    assert all(e["slot"] is None for e in graph["edges"])


def test_replay_of_a_large_graph_aligns_paddles_dump_of_copied_nodes(tmp_path, monkeypatch):
    """Without trace(), a graph above the slot-log threshold is replayed with the dump only;
    paddle.grad dumps copies of the nodes, which must be aligned back to ours."""
    import paddleviz_widget.tracer.merge.collect as collect

    monkeypatch.setattr(collect, "SLOT_LOG_MAX_NODES", 5)
    model, _ = lenet_and_input()
    y = model(paddle.randn([1, 3, 32, 32]))
    graph = nested_graph(y)
    assert "dump" in graph["meta"]["annotations"] and "vlog" not in graph["meta"]["annotations"]
    y.sum().backward(dump_backward_graph_path=str(tmp_path))
    assert_matches_dump(graph, restrict_dump(read_dump(tmp_path), [ptr_of(y)]))
