"""Every graph document is checked on the way in (graph/decode.py + graph/check.py): broken
ones raise GraphDocumentError naming the field, whatever the schema version; the JS reader
refuses the same documents (tests/fixtures/broken/graph_documents.json, js/view/payload_check)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from paddleviz_widget import GraphDocumentError, PaddlevizError
from paddleviz_widget.graph import Graph, nested_dict

GRAPHS = Path(__file__).parent / "fixtures" / "graphs"
LENET = json.loads((GRAPHS / "lenet.json").read_text(encoding="utf-8"))
BROKEN = GRAPHS.parent / "broken" / "graph_documents.json"
BAD = json.loads(BROKEN.read_text(encoding="utf-8"))["cases"]


def apply(doc: dict[str, Any], changes: list[Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for path, value in changes:
        *head, last = path
        at: Any = doc
        for key in head:
            at = at[key]
        at[last] = value
    return doc


@pytest.mark.parametrize("case", BAD, ids=[c["name"] for c in BAD])
def test_shared_broken_documents_are_refused_naming_the_field(case: dict[str, Any]) -> None:
    doc = apply(LENET, case["set"])
    with pytest.raises(GraphDocumentError) as caught:
        Graph.from_dict(doc)
    assert caught.value.field == case["field"]
    assert str(caught.value).startswith(case["field"] + ": ")
    assert isinstance(caught.value, PaddlevizError) and isinstance(caught.value, ValueError)


def test_the_shared_cases_are_valid_without_their_change() -> None:
    assert len(Graph.from_dict(LENET).nodes) == len(LENET["nodes"])


def v1(change: Any) -> dict[str, Any]:
    doc = nested_dict(LENET)
    change(doc)
    return doc


V1_BROKEN = {
    "dangling edge": (lambda d: d["edges"][3].update(target="n999"), "edges[3].target"),
    "int id": (lambda d: d["nodes"][2].update(id=7), "nodes[2].id"),
    "string shape": (lambda d: d["edges"][0]["grad"].update(shape="4x4"), "edges[0].grad.shape"),
    "duplicate ids": (lambda d: d["nodes"][4].update(id="n3"), "nodes[4].id"),
    "missing key": (lambda d: d["groups"][1].pop("name"), "groups[1]"),
    "stats not numbers": (
        lambda d: d["edges"][0].update(
            stats=dict.fromkeys(("norm", "max_abs", "mean_abs", "zero_fraction", "nan", "inf"), "x")
        ),
        "edges[0].stats.norm",
    ),
}


@pytest.mark.parametrize("case", list(V1_BROKEN))
def test_schema_1_0_documents_go_through_the_same_check(case: str) -> None:
    change, field = V1_BROKEN[case]
    with pytest.raises(GraphDocumentError) as caught:
        Graph.from_dict(v1(change))
    assert caught.value.field == field


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2", "2.3"])
def test_every_2_x_version_is_checked(version: str) -> None:
    doc = apply(LENET, [[["schema_version"], version], [["edges", 3, "target"], "n999"]])
    with pytest.raises(GraphDocumentError, match=r"edges\[3\]\.target: 'n999' is not the id"):
        Graph.from_dict(doc)


def test_a_deep_diff_value_or_meta_does_not_recurse() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    doc = apply(LENET, [[["meta", "deep"], deep]])
    assert Graph.from_dict(doc).meta["deep"] is deep  # meta is free-form, kept as it is
    marked = apply(
        LENET,
        [
            [
                ["nodes", 0, "diff"],
                {"status": "changed", "changes": [{"field": "shape", "a": deep, "b": [1]}]},
            ]
        ],
    )
    with pytest.raises(GraphDocumentError, match=r"nodes\[0\]\.diff\.changes\[0\]\.a"):
        Graph.from_dict(marked)


def test_non_finite_stats_are_refused() -> None:
    doc = apply(LENET, [[["edges", 0, "stats"], [float("nan"), 1, 1, 0, 0, 0]]])
    with pytest.raises(GraphDocumentError, match=r"edges\[0\]\.stats\.norm"):
        Graph.from_dict(doc)


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("x", "meta.unreached_params"),
        (1, "meta.unreached_params"),
        ([None], "meta.unreached_params[0]"),
        ([{"name": "fc.weight", "reason": "r"}, "fc.bias"], "meta.unreached_params[1]"),
        ([{"reason": "r"}], "meta.unreached_params[0].name"),
        ([{"name": "fc.weight", "reason": 3}], "meta.unreached_params[0].reason"),
        ([{"name": "fc.weight", "frozen": "yes"}], "meta.unreached_params[0].frozen"),
    ],
)
def test_unreached_params_of_another_shape_are_refused(value: Any, field: str) -> None:
    """problems() reads meta.unreached_params: an entry of another shape got past the check
    and raised a bare AttributeError/TypeError there (a damaged run-log capture, a hand-edited
    document)."""
    from paddleviz_widget.widget.reports import problems

    doc = apply(LENET, [[["meta", "unreached_params"], value]])
    with pytest.raises(GraphDocumentError) as caught:
        problems(doc)
    assert caught.value.field == field


def test_unreached_params_as_the_tracer_writes_them_read() -> None:
    from paddleviz_widget.widget.reports import problems

    entries = [
        {"name": "fc.weight", "reason": "not in this backward graph"},
        {"name": "fc.bias", "reason": "stop_gradient=True: frozen", "frozen": True},
    ]
    found = problems(apply(LENET, [[["meta", "unreached_params"], entries]]))
    assert [(p.kind, p.name) for p in found] == [("unreached", "fc.weight"), ("frozen", "fc.bias")]


@pytest.mark.parametrize(
    "big", [2**63, -(2**63) - 1, 10**5000], ids=["2**63", "-2**63-1", "10**5000"]
)
def test_integers_wider_than_64_bits_are_refused(big: int) -> None:
    """A shape of 10**5000 was accepted, then the document could not be sent or saved
    (json: over 4,300 digits; orjson: over 64 bits) - found by the hostile-document property
    test. Paddle's shapes and counts are 64-bit."""
    doc = apply(LENET, [[["tensors", 2, 1, 1], big]])
    with pytest.raises(GraphDocumentError) as caught:
        Graph.from_dict(doc)
    assert caught.value.field == "tensors[2][1]"


def test_64_bit_shapes_read_and_write() -> None:
    doc = apply(LENET, [[["tensors", 2, 1, 1], 2**63 - 1], [["tensors", 2, 1, 0], -(2**63)]])
    written = Graph.from_dict(doc).to_dict()
    assert Graph.from_dict(json.loads(json.dumps(written))).to_dict() == written
