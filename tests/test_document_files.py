"""A saved graph file that this version cannot read (a newer schema_version) or whose tables are
broken: from_graph and diff name the file, the field and the fix (it opened a widget whose page
said why, naming neither the file nor the fix, and diff said to pass build_graph's dict)."""

from __future__ import annotations

import json

import paddle
import pytest

from paddleviz_widget import GraphDocumentError, GraphWidget


@pytest.fixture
def saved(tmp_path):
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 1))
    path = tmp_path / "graph.json"
    GraphWidget(model(paddle.randn([2, 4])).sum()).save(path)
    return path


def _write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_a_newer_file_names_itself_and_the_upgrade(saved, tmp_path):
    newer = _write(
        tmp_path, "newer.json", {**json.loads(saved.read_text()), "schema_version": "2.4"}
    )
    for call, label in (
        (lambda: GraphWidget.from_graph(newer), "GraphWidget.from_graph"),
        (lambda: GraphWidget.diff(saved, newer), "graph 'b'"),
    ):
        with pytest.raises(GraphDocumentError) as error:
            call()
        said = str(error.value)
        assert said.startswith(f"{label}: {str(newer)!r}: schema_version: ")
        assert "'2.4' is a newer paddleviz_widget's" in said
        assert said.endswith("upgrade it (pip install -U paddleviz_widget)")
        assert error.value.field == "schema_version"


def test_a_broken_table_names_the_file_the_field_and_the_fix(saved, tmp_path):
    doc = json.loads(saved.read_text())
    doc["edges"][1]["target"] = "n999"
    broken = _write(tmp_path, "broken.json", doc)
    for call, label in (
        (lambda: GraphWidget.from_graph(str(broken)), "GraphWidget.from_graph"),
        (lambda: GraphWidget.diff(broken, saved), "graph 'a'"),
    ):
        with pytest.raises(GraphDocumentError) as error:
            call()
        said = str(error.value)
        assert said.startswith(f"{label}: {str(broken)!r}: edges[1].target: ")
        assert "save the graph again (w.save('graph.json')" in said
        assert error.value.field == "edges[1].target"
    # the good file and the same document as a dict still open (the page says why for a dict)
    assert GraphWidget.from_graph(saved).graph["nodes"]
    assert GraphWidget.from_graph(doc).graph is not None
