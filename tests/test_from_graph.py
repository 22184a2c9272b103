"""``GraphWidget.from_graph``: the widget of a graph document, or of a saved ``.json`` file,
with the same view options as ``GraphWidget(y)``; a mistake gets an error naming the file or
the argument and what to pass. On a real traced LeNet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import paddle
import pytest
from models import traced_lenet_graph

from paddleviz_widget import GraphWidget, build_graph, trace
from paddleviz_widget.graph import Graph


@pytest.fixture(scope="module")
def lenet() -> dict[str, Any]:
    return traced_lenet_graph()


def test_a_saved_graph_reopens_as_it_was_saved(lenet: dict[str, Any], tmp_path: Path) -> None:
    path = GraphWidget.from_graph(lenet).save(tmp_path / "lenet.json")
    for opened in (path, str(path)):
        w = GraphWidget.from_graph(opened)
        assert w.graph == lenet == json.loads(path.read_text(encoding="utf-8"))
        assert w.summary() == GraphWidget.from_graph(lenet).summary()


def test_view_options_are_those_of_the_constructor(lenet: dict[str, Any]) -> None:
    w = GraphWidget.from_graph(lenet, height=500, depth=1, fold=False, view="forward")
    assert (w.height, w.depth, w.fold, w.view) == ("500px", 1, False, "forward")
    assert (w._request["depth"], w._request["edits"]) == (1, [])  # the page is asked for 1
    auto = GraphWidget.from_graph(lenet)
    assert (auto.depth, auto._request["depth"]) == (-1, -1)
    with pytest.raises(ValueError, match="depth must be >= 0"):
        GraphWidget.from_graph(lenet, depth=-2)


def test_the_document_is_shown_as_it_is(lenet: dict[str, Any]) -> None:
    w = GraphWidget.from_graph(lenet)
    assert w.graph is lenet  # not copied: a 100k-node document is sent as it is


def test_a_graph_object_is_shown_as_its_document(lenet: dict[str, Any]) -> None:
    assert GraphWidget.from_graph(Graph.from_dict(lenet)).graph == lenet


def test_tensors_are_pointed_to_the_constructor() -> None:
    model = paddle.nn.Linear(2, 2)
    with trace(model):
        y = model(paddle.ones([1, 2])).sum()
        y.backward()
    with pytest.raises(TypeError, match=r"not a Tensor.*for tensors: GraphWidget\(y\)"):
        GraphWidget.from_graph(y)
    with pytest.raises(TypeError, match=r"no 'schema_version'.*for tensors: GraphWidget\(y\)"):
        GraphWidget.from_graph({"loss": y})
    assert GraphWidget.from_graph(build_graph(y)).graph["nodes"]


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda d: d / "missing.json", FileNotFoundError, r"no file '.*missing\.json'"),
        (lambda d: d, ValueError, r"is a directory; for a Paddle backward dump"),
        (lambda d: _write(d / "bad.json", "{not json"), ValueError, r"not a JSON graph document"),
        (lambda d: _write(d / "list.json", "[1, 2]"), ValueError, r"holds a JSON list"),
    ],
)
def test_a_bad_file_is_named_with_the_fix(
    tmp_path: Path, make: Any, error: type, message: str
) -> None:
    with pytest.raises(error, match=f"GraphWidget.from_graph: .*{message}"):
        GraphWidget.from_graph(make(tmp_path))


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
