"""GraphWidget.from_jittor / build_graph_from_jittor: Jittor's trace data as our graph.

Jittor cannot run here (its tracer refuses Python 3.11), so the data are the hand-made fixtures
in tests/fixtures/jittor/ (a 2-layer MLP's inference and training traces, in the format of
jt.dump_trace_data()). The expectations are computed from the raw dicts in each test, from
Jittor's own lists (a variable's ``outputs``, ``grad_op_id``, ``fused_ops``), not from the
reader under test.
"""

from __future__ import annotations

import collections
import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from paddleviz_widget import GraphWidget
from paddleviz_widget.graph import Graph, nested_dict, validate_graph_dict
from paddleviz_widget.sources import build_graph_from_jittor, load_jittor_graph
from paddleviz_widget.sources.jittor_format import JittorFormatError

FIXTURES = Path(__file__).parent / "fixtures" / "jittor"
NAMES = ["simple_model", "simple_model_train"]


def raw(name: str) -> dict[str, Any]:
    """The fixture as jt.dump_trace_data() returns it: int keys, as in the pickle."""
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    return {part: {int(k): v for k, v in data[part].items()} for part in data}


def doc_of(data: Any) -> dict[str, Any]:
    doc = build_graph_from_jittor(data)
    validate_graph_dict(json.loads(json.dumps(doc)))
    return nested_dict(doc)


def shape(text: str) -> list[int]:
    return [int(d) for d in text.strip("[]").split(",") if d]


def ops_of(data: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {k: n for k, n in data["node_data"].items() if n["attrs"]["is_var"] == "0"}


@pytest.mark.parametrize("name", NAMES)
def test_ops_become_nodes_and_variables_become_edges(name):
    data = raw(name)
    graph = doc_of(data)
    nodes = {n["id"]: n for n in graph["nodes"]}
    ops = ops_of(data)
    assert {i: n["name"] for i, n in nodes.items() if n["kind"] != "param"} == {
        f"n{k}": op["attrs"]["name"] for k, op in ops.items()
    }
    assert all(nodes[f"n{k}"]["ptr"] == hex(k) for k in ops)

    expected: collections.Counter[tuple[Any, ...]] = collections.Counter()
    for var in data["node_data"].values():
        if var["attrs"]["is_var"] != "1":
            continue
        source = f"n{var['inputs'][0]}" if var["inputs"] else f"n{var['id']}"
        for consumer in var["outputs"]:  # Jittor's own consumer list
            attrs = var["attrs"]
            expected[
                (
                    source,
                    f"n{consumer}",
                    attrs["dtype"],
                    tuple(shape(attrs["shape"])),
                    attrs["name"] or f"v{var['id']}",
                )
            ] += 1
    got = collections.Counter(
        (e["source"], e["target"], e["grad"]["dtype"], tuple(e["grad"]["shape"]), e["slot"])
        for e in graph["edges"]
    )
    assert got == expected
    for e in graph["edges"]:  # index: the variable's position among the consumer's inputs
        var_id = ops[int(e["target"][1:])]["inputs"][e["index"]]
        assert e["slot"] in (data["node_data"][var_id]["attrs"]["name"], f"v{var_id}")


@pytest.mark.parametrize("name", NAMES)
def test_parameters_are_named_leaves_with_shape_and_dtype(name):
    data = raw(name)
    graph = doc_of(data)
    leaves = {
        f"n{k}": v["attrs"]
        for k, v in data["node_data"].items()
        if v["attrs"]["is_var"] == "1" and not v["inputs"] and v["outputs"]
    }
    params = {n["id"]: n for n in graph["nodes"] if n["kind"] == "param"}
    assert params.keys() == leaves.keys()
    assert {a["name"] for a in leaves.values()} == {
        "linear1.w",
        "linear1.b",
        "linear2.w",
        "linear2.b",
    }
    for node_id, attrs in leaves.items():
        node = params[node_id]
        assert node["name"] == attrs["name"]
        assert node["param"] == {
            "name": attrs["name"],
            "shape": shape(attrs["shape"]),
            "dtype": attrs["dtype"],
        }


@pytest.mark.parametrize("name", NAMES)
def test_stacks_become_nested_layer_groups_and_call_sites(name):
    data = raw(name)
    graph = doc_of(data)
    nodes = {n["id"]: n for n in graph["nodes"]}
    groups = {g["id"]: g for g in graph["groups"]}
    for k, op in ops_of(data).items():
        node = nodes[f"n{k}"]
        modules = [s for s in op["stacks"] if s["type"]]
        chain = []
        gid = node["group"]
        while gid is not None:
            chain.append(groups[gid])
            gid = groups[gid]["parent"]
        chain.reverse()
        assert [g["type"] for g in chain] == [s["type"] for s in modules]
        assert [g["name"] for g in chain] == [
            ".".join(s["name"] for s in modules[: i + 1]) for i in range(len(modules))
        ]
        located = [s for s in op["stacks"] if s["lineno"] > 0 and "jittor" not in s["file_path"]]
        site = node["call_site"]
        assert (site["file"], site["line"]) == (located[-1]["file_path"], located[-1]["lineno"])
    # the input's array op has raw frames only; the innermost one is inside Jittor itself
    array = nodes["n4"]
    assert array["name"] == "array" and array["group"] is None
    assert array["call_site"]["line"] == 46
    # a weight sits in the layer that uses it (inference), or above all its users (training)
    w = next(n for n in graph["nodes"] if n["name"] == "linear1.w")
    if name == "simple_model":
        assert groups[w["group"]]["name"] == "model.linear1"
    else:
        assert w["group"] is None


def test_backward_ops_are_linked_to_the_forward_op_they_differentiate():
    data = raw("simple_model_train")
    graph = doc_of(data)
    jt = graph["meta"]["jittor"]
    expected = {
        f"n{k}": f"n{op['attrs']['grad_op_id']}"
        for k, op in ops_of(data).items()
        if "grad_op_id" in op["attrs"]
    }
    assert jt["grad_of"] == expected and len(expected) >= 10
    assert collections.Counter(expected.values()).most_common(1)[0][1] >= 2  # shared forward op
    nodes = {n["id"]: n for n in graph["nodes"]}
    groups = {g["id"]: g for g in graph["groups"]}
    for bwd in expected:
        top = nodes[bwd]["group"]
        while groups[top]["parent"] is not None:
            top = groups[top]["parent"]
        assert groups[top]["name"] == "grad" and groups[top]["type"] == "Grad"
    assert doc_of(raw("simple_model"))["meta"]["jittor"]["grad_of"] == {}


@pytest.mark.parametrize("name", NAMES)
def test_execution_groups_are_kept_in_order_with_their_ops(name):
    data = raw(name)
    jt = doc_of(data)["meta"]["jittor"]
    infos = [data["execute_op_info"][k] for k in sorted(data["execute_op_info"])]
    assert [e["ops"] for e in jt["executions"]] == [
        [f"n{i}" for i in info["fused_ops"]] for info in infos
    ]
    assert [e["jit_key"] for e in jt["executions"]] == [info["jit_key"] for info in infos]
    assert [e["file_path"] for e in jt["executions"]] == [info["file_path"] for info in infos]
    assert jt["fused_groups"] == sum(len(info["fused_ops"]) > 1 for info in infos) >= 3
    assert jt["direction"] == "dataflow"


@pytest.mark.parametrize("name", NAMES)
def test_outputs_are_ops_whose_results_nothing_consumes(name):
    data = raw(name)
    graph = doc_of(data)
    sinks = {
        f"n{k}"
        for k, op in ops_of(data).items()
        if not any(data["node_data"][v]["outputs"] for v in op["outputs"])
    }
    outputs = {n["id"]: n for n in graph["nodes"] if n["kind"] == "output"}
    assert outputs.keys() == sinks and sinks
    assert [o["node"] for o in graph["meta"]["outputs"]] == list(outputs)
    for node_id, node in outputs.items():
        var = data["node_data"][ops_of(data)[int(node_id[1:])]["outputs"][0]]["attrs"]
        assert node["tensor"]["shape"] == shape(var["shape"])


def test_pickle_json_and_dict_give_the_same_graph(tmp_path):
    data = raw("simple_model_train")
    pkl = tmp_path / "trace.pkl"
    pkl.write_bytes(pickle.dumps(data))
    from_dict = build_graph_from_jittor(data)
    assert build_graph_from_jittor(pkl) == from_dict
    assert build_graph_from_jittor(str(FIXTURES / "simple_model_train.json")) == from_dict
    assert Graph.from_dict(from_dict).to_dict() == from_dict
    # the document the JS tests read is still what the source gives
    committed = json.loads((FIXTURES / "simple_model_train.graph.json").read_text())
    assert committed == json.loads(json.dumps(from_dict))


def test_the_widget_reads_jittor_data(tmp_path):
    pkl = tmp_path / "trace.pkl"
    pkl.write_bytes(pickle.dumps(raw("simple_model")))
    w = GraphWidget.from_jittor(pkl, depth=1)
    assert w.graph == build_graph_from_jittor(raw("simple_model"))
    # The page opens the groups down to depth 1 (js/view; tests/browser): here, the request.
    assert w.depth == 1 and w._request["depth"] == 1
    w.expand("model.linear1")
    names = {g["id"]: g["name"] for g in w.graph["groups"]}
    assert "model.linear1" in {names[g] for g in w.expanded}
    assert "trust" in (GraphWidget.from_jittor.__doc__ or "")
    assert "trust" in (load_jittor_graph.__doc__ or "")


def test_a_variable_used_twice_gives_two_edges():
    def var(i: int, ins: list[int], outs: list[int], name: str = "") -> dict[str, Any]:
        attrs = {"is_var": "1", "name": name, "shape": "[3,]", "dtype": "float32"}
        return {"id": i, "inputs": ins, "outputs": outs, "stacks": [], "attrs": attrs}

    square = {
        "id": 1,
        "inputs": [0, 0],
        "outputs": [2],
        "stacks": [],
        "attrs": {"is_var": "0", "name": "binary.multiply"},
    }
    data = {
        "node_data": {0: var(0, [], [1, 1], "x"), 1: square, 2: var(2, [1], [])},
        "execute_op_info": {},
    }
    graph = doc_of(data)
    assert [(e["source"], e["target"], e["index"]) for e in graph["edges"]] == [
        ("n0", "n1", 0),
        ("n0", "n1", 1),
    ]
    assert [n["kind"] for n in graph["nodes"]] == ["param", "output"]


def test_inputs_missing_from_the_trace_are_counted_and_said():
    data = raw("simple_model")
    del data["node_data"][0]  # linear1.w, as if computed before the trace began
    graph = doc_of(data)
    assert graph["meta"]["jittor"]["unrecorded_inputs"] == 1
    assert "not in the trace" in graph["meta"]["notice"]
    assert "linear1.w" not in {n["name"] for n in graph["nodes"]}


def broken(edit: Any) -> dict[str, Any]:
    data = copy.deepcopy(raw("simple_model_train"))
    edit(data)
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "not a .*list|got a list"),
        ({"execute_op_info": {}}, "no 'node_data' key"),
        ({"node_data": {}}, "no 'execute_op_info' key"),
        (broken(lambda d: d["node_data"][5].pop("attrs")), r"node_data\[5\] has no 'attrs' key"),
        (broken(lambda d: d["node_data"][5]["attrs"].pop("is_var")), "no 'is_var' key"),
        (broken(lambda d: d["node_data"][6]["stacks"][0].pop("lineno")), "no 'lineno' key"),
        (broken(lambda d: d["node_data"][6].update(inputs="5")), r"\['inputs'\] is str"),
        (broken(lambda d: d["node_data"][6].update(id=7)), "has id 7, not its key"),
        (broken(lambda d: d["node_data"][6]["attrs"].update(is_var="op")), "not '1'"),
        (broken(lambda d: d["execute_op_info"][0].pop("fused_ops")), "no 'fused_ops' key"),
    ],
)
def test_data_not_in_the_format_names_the_missing_key(data, message):
    with pytest.raises(JittorFormatError, match=message):
        build_graph_from_jittor(data)


def test_files_that_cannot_be_read(tmp_path):
    with pytest.raises(FileNotFoundError, match="dump_trace_data"):
        build_graph_from_jittor(tmp_path / "missing.pkl")
    listed = tmp_path / "list.pkl"
    listed.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(JittorFormatError, match="holds a list, not a dict"):
        build_graph_from_jittor(listed)
    junk = tmp_path / "junk.pkl"
    junk.write_bytes(b"not a pickle at all")
    with pytest.raises(JittorFormatError, match=r"junk\.pkl: cannot read it \(UnpicklingError"):
        build_graph_from_jittor(junk)
