"""Damaged and hostile Jittor trace files and call-site logs: each is refused with the
package's own error naming the file (JittorFileError / SourceFileError, both ValueErrors), never
a bare RecursionError, OverflowError, MemoryError or an unpickler's message without a file."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from paddleviz_widget import GraphDocumentError, PaddlevizError, SourceFileError
from paddleviz_widget.export.view_rules import view_dot
from paddleviz_widget.graph import Graph
from paddleviz_widget.graph.check import MAX_GROUP_DEPTH
from paddleviz_widget.sources import build_graph_from_jittor, load_jittor_graph
from paddleviz_widget.sources.jittor_format import JittorFileError, JittorFormatError

FIXTURE = Path(__file__).parent / "fixtures" / "jittor" / "simple_model.json"


def data() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def op_ids(d: dict[str, Any]) -> list[str]:
    return [k for k, n in d["node_data"].items() if n["attrs"]["is_var"] == "0"]


def test_an_op_nested_3000_modules_deep_reads() -> None:
    d = data()
    op = d["node_data"][op_ids(d)[0]]
    op["stacks"] = [
        {"name": f"m{k}", "type": "Block", "file_path": "/x.py", "lineno": k + 1}
        for k in range(3000)
    ]
    graph = load_jittor_graph(d)
    deepest = max(graph.groups, key=lambda g: g.name.count("."))
    assert deepest.name.count(".") == MAX_GROUP_DEPTH - 1  # cut where the explorer stops
    parent = {g.id: g.parent for g in graph.groups}
    depth, cur = 0, deepest.id
    while cur is not None:
        depth, cur = depth + 1, parent[cur]
    assert depth == MAX_GROUP_DEPTH
    assert f"1 op(s) ran more than {MAX_GROUP_DEPTH} modules deep" in graph.meta["notice"]
    assert view_dot(graph.to_dict()).lstrip().startswith("digraph")  # and it draws


def test_a_graph_document_deeper_than_the_explorer_draws_is_refused() -> None:
    groups = [{"id": f"g{k}", "name": f"m{k}", "type": "Block"} for k in range(300)]
    for k in range(1, 300):
        groups[k]["parent"] = f"g{k - 1}"
    doc = {**Graph(nodes=(), edges=()).to_dict(), "groups": groups}
    with pytest.raises(GraphDocumentError, match=r"^groups: the layer tree is more than 256"):
        Graph.from_dict(doc)


@pytest.mark.parametrize("where", ["id", "lineno"])
@pytest.mark.parametrize("value", ["Infinity", "NaN", "-Infinity", "1e400"])
def test_non_finite_ids_and_lines_in_a_json_file_are_refused(tmp_path, where, value) -> None:
    d = data()
    key = op_ids(d)[0]
    text = json.dumps(d)
    node = json.dumps(d["node_data"][key])
    if where == "id":
        broken = node.replace(f'"id": {key},', f'"id": {value},', 1)
    else:
        broken = node.replace('"lineno": ', f'"lineno": {value}, "x": ', 1)
    assert broken != node
    path = tmp_path / "trace.json"
    path.write_text(text.replace(node, broken))
    with pytest.raises(JittorFileError) as caught:
        build_graph_from_jittor(path)
    assert str(caught.value).startswith(str(path))
    assert isinstance(caught.value, SourceFileError) and isinstance(caught.value, JittorFormatError)


def test_a_5000_digit_line_number_is_refused(tmp_path) -> None:
    d = data()
    d["node_data"][op_ids(d)[0]]["stacks"][0]["lineno"] = "9" * 5000
    with pytest.raises(JittorFormatError, match=r"\['lineno'\] is '9999.*\(too long\), not an id"):
        load_jittor_graph(d)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(d).replace('"' + "9" * 5000 + '"', "9" * 5000))
    with pytest.raises(JittorFileError, match="trace.json: cannot read it"):
        load_jittor_graph(path)


CORRUPT = {
    "not a pickle": b"not a pickle at all",
    "cut short": pickle.dumps(data())[:200],
    "unregistered extension code": b"\x80\x02\x82\x1a.",
    "absurd length": b"\x80\x04\x95" + (2**62).to_bytes(8, "little") + b"B\xff\xff\xff\x7f",
    "empty": b"",
    "deep nesting": b"\x80\x02" + b"(" * 200_000 + b"l" * 200_000 + b".",
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_corrupt_pickles_name_the_file(tmp_path, case) -> None:
    path = tmp_path / "trace.pkl"
    path.write_bytes(CORRUPT[case])
    with pytest.raises(JittorFileError) as caught:
        build_graph_from_jittor(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: cannot read it (") or "holds a" in message, message
    assert isinstance(caught.value, PaddlevizError)


@pytest.mark.parametrize("suffix", [".dat", ".txt", ".PKL.bak", ""])
def test_only_pkl_and_pickle_paths_are_unpickled(tmp_path, suffix) -> None:
    path = tmp_path / f"trace{suffix}"
    path.write_bytes(pickle.dumps(data()))
    with pytest.raises(JittorFileError, match=r"not a \.json, \.pkl or \.pickle file"):
        build_graph_from_jittor(path)
    for good in (".pkl", ".pickle", ".PKL"):
        renamed = path.with_name(f"trace{good}")
        renamed.write_bytes(path.read_bytes())
        assert build_graph_from_jittor(renamed)["nodes"]


def test_a_format_error_in_a_file_names_the_file(tmp_path) -> None:
    d = data()
    d["node_data"][op_ids(d)[0]].pop("attrs")
    path = tmp_path / "trace.pkl"
    path.write_bytes(pickle.dumps(d))
    with pytest.raises(JittorFileError, match=r"trace\.pkl: node_data\[.*\] has no 'attrs' key"):
        build_graph_from_jittor(path)


def test_negative_ids_are_refused() -> None:
    d = data()
    key = op_ids(d)[0]
    node = d["node_data"].pop(key)
    node["id"] = -3
    d["node_data"]["-3"] = node
    with pytest.raises(JittorFormatError, match=r"is -3, not an id \(an int >= 0\)"):
        load_jittor_graph(d)
