"""Schema 2.2 (graph/codec.py): exact round trips on real graphs, 1.0 documents still load, and
broken documents fail with a message that names the problem."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import paddle
import pytest
from models import lenet_output
from paddle_versions import requires_paddle_33

from paddleviz_widget import trace
from paddleviz_widget.graph import (
    SCHEMA_VERSION,
    Graph,
    decode,
    encode,
    nested_dict,
    validate_graph_dict,
)
from paddleviz_widget.tracer import trace_graph

FIXTURES = Path(__file__).parent / "fixtures" / "graphs"


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def through_json(doc: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(doc))


def traced_lenet() -> Graph:
    model, _ = lenet_output()
    with trace(model):
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward()
    return trace_graph(y)


@requires_paddle_33
def test_traced_lenet_round_trips_exactly() -> None:
    graph = traced_lenet()
    # What the round trip has to carry: slots with tensor names, call sites, parameters,
    # edge slots and gradients, the output's tensor, groups.
    assert any(s.tensor == "@Grad" for n in graph.nodes for s in n.outputs)
    assert any(s.tensor is None for n in graph.nodes for s in n.inputs)
    assert all(e.slot and e.grad for e in graph.edges)
    assert any(n.call_site for n in graph.nodes) and any(n.param for n in graph.nodes)
    assert any(n.tensor for n in graph.nodes) and graph.groups
    doc = graph.to_dict()
    assert doc["schema_version"] == SCHEMA_VERSION == "2.3"
    validate_graph_dict(through_json(doc))
    assert Graph.from_dict(doc) == graph
    assert Graph.from_dict(through_json(doc)) == graph


def test_untraced_graphs_round_trip_exactly() -> None:
    model, y = lenet_output()
    fresh = trace_graph(y)  # replayed: gradients, slots, no groups
    y.sum().backward()
    freed = trace_graph(y, model=model)  # structure, parameter names, a notice
    for graph in (fresh, freed):
        assert Graph.from_dict(through_json(graph.to_dict())) == graph
    assert freed.meta["notice"]


@pytest.mark.parametrize("name", ["lenet", "nested", "resnet18"])
def test_fixture_documents_decode_and_encode_back_unchanged(name: str) -> None:
    doc = load(FIXTURES / f"{name}.json")
    validate_graph_dict(doc)
    graph = Graph.from_dict(doc)
    assert graph.to_dict() == doc
    assert Graph.from_dict(nested_dict(graph)) == graph  # and through the 1.0 layout


def test_a_saved_1_0_document_loads_as_the_graph_it_describes() -> None:
    v1 = load(FIXTURES / "v1" / "lenet.json")
    assert v1["schema_version"] == "1.0"
    graph = Graph.from_dict(v1)
    assert nested_dict(graph) == v1  # nothing in it was dropped or changed
    assert Graph.from_dict(through_json(graph.to_dict())) == graph
    n1 = next(n for n in v1["nodes"] if n["id"] == "n1")
    node = next(n for n in graph.nodes if n.id == "n1")
    assert [(s.name, s.tensor) for s in node.inputs] == [
        (s["name"], s["tensor"]) for s in n1["inputs"]
    ]
    assert list(node.inputs[0].grad.shape) == n1["inputs"][0]["shape"]


def test_the_js_cross_check_fixture_is_the_1_0_lenet_in_2_0() -> None:
    """js/view/payload.test.ts decodes both and compares them (the file keeps its 2.0 name;
    it holds what the encoder writes now)."""
    v1 = load(FIXTURES / "v1" / "lenet.json")
    assert load(FIXTURES / "v1" / "lenet.as_2.0.json") == encode(decode(v1))


def test_nested_dict_accepts_documents_and_graphs() -> None:
    doc = load(FIXTURES / "lenet.json")
    assert nested_dict(doc) == nested_dict(Graph.from_dict(doc))
    assert nested_dict(nested_dict(doc)) == nested_dict(doc)


def test_the_document_is_sparse_and_interned() -> None:
    doc = load(FIXTURES / "resnet18.json")

    def empties(value: Any, path: str) -> list[str]:
        if value is None or value == [] or value == {}:
            return [path]
        if isinstance(value, dict):
            return [p for k, v in value.items() for p in empties(v, f"{path}.{k}")]
        if isinstance(value, list):
            return [p for i, v in enumerate(value) for p in empties(v, f"{path}[{i}]")]
        return []

    for key in ("nodes", "edges", "groups"):
        for path in empties(doc[key], key):  # only a slot with no description may be null
            assert re.fullmatch(r"nodes\[\d+\]\.(inputs|outputs)\[\d+\]", path), path
    assert all("kind" not in n or n["kind"] != "op" for n in doc["nodes"])
    assert all(e.get("index", 1) != 0 for e in doc["edges"])
    text = json.dumps(doc)
    assert text.count('"@Grad"') == sum(
        json.dumps(sig).count('"@Grad"') for sig in doc["ops"].values()
    )
    assert len(doc["tensors"]) == len({json.dumps(t) for t in doc["tensors"]})
    assert len(doc["sites"]) == len({json.dumps(s) for s in doc["sites"]})


# -- broken documents ----------------------------------------------------------------------


def broken(change: Any) -> dict[str, Any]:
    doc = copy.deepcopy(load(FIXTURES / "lenet.json"))
    change(doc)
    return doc


def _first(items: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return next(item for item in items if key in item)


BROKEN = {
    "unknown version": (
        lambda d: d.update(schema_version="3.0"),
        r"schema_version '3\.0' is a newer paddleviz_widget's .*'2\.0' and '1\.0'\): upgrade it "
        r"\(pip install -U paddleviz_widget\)",
    ),
    "garbage version": (
        lambda d: d.update(schema_version="x"),
        r"unknown graph schema_version 'x': .*'1\.0'; this is not a graph document "
        r"paddleviz_widget wrote",
    ),
    "no version": (lambda d: d.pop("schema_version"), r"unknown graph schema_version None"),
    "edge grad out of range": (
        lambda d: d["edges"][2].update(grad=999),
        r"edges\[2\]\.grad: tensor index 999 is out of range \(the table has \d+\)",
    ),
    "node tensor out of range": (
        lambda d: _first(d["nodes"], "tensor").update(tensor=-1),
        r"nodes\[\d+\]\.tensor: tensor index -1 is out of range",
    ),
    "slot tensor out of range": (
        lambda d: d["nodes"][1]["inputs"].__setitem__(0, 77),
        r"nodes\[1\]\.inputs\[0\]: tensor index 77 is out of range",
    ),
    "slot beyond its op's signature": (
        lambda d: d["nodes"][1]["outputs"].extend([0, 0, 0, 0]),
        r"nodes\[1\]\.outputs\[\d\]: ops\['MatmulGradNode'\]\.outputs slot index \d is out of ",
    ),
    "op without a signature": (
        lambda d: d["ops"].pop("MatmulGradNode"),
        r"nodes\[1\]\.inputs\[0\]: ops\['MatmulGradNode'\]\.inputs slot index 0 is out of "
        r"range \(the table has 0\)",
    ),
    "call site out of range": (
        lambda d: _first(d["nodes"], "call_site").update(call_site=40),
        r"nodes\[\d+\]\.call_site: site index 40 is out of range",
    ),
    "file out of range": (
        lambda d: d["sites"][0].__setitem__(0, 5),
        r"sites\[0\]\[0\]: file index 5 is out of range",
    ),
    "edge slot out of range": (
        lambda d: d["edges"][0].update(slot=9),
        r"edges\[0\]\.slot: slot \(outputs of n0\) index 9 is out of range",
    ),
    "tensor entry of the wrong length": (
        lambda d: d["tensors"].append(["float32", [1]]),
        r"tensors\[\d+\]: expected a list of 3 items",
    ),
    "a node without an id": (
        lambda d: d["nodes"][0].pop("id"),
        r"nodes\[0\]: malformed schema 2\.3 entry \(KeyError: missing field 'id'\)",
    ),
    "no nodes": (
        lambda d: d.pop("nodes"),
        r"nodes: missing or not a list \(schema 2\.3\)",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_document_says_what_is_wrong(case: str) -> None:
    change, message = BROKEN[case]
    with pytest.raises(ValueError, match=message):
        Graph.from_dict(broken(change))


def test_a_document_must_be_an_object() -> None:
    with pytest.raises(ValueError, match="a graph document is a JSON object, not list"):
        decode([])  # type: ignore[arg-type]


def test_a_broken_1_0_document_says_so() -> None:
    v1 = load(FIXTURES / "v1" / "lenet.json")
    del v1["edges"][0]["target"]
    expected = r"edges\[0\]: malformed schema 1\.0 entry \(KeyError: missing field 'target'\)"
    with pytest.raises(ValueError, match=expected):
        Graph.from_dict(v1)
