"""Bad input gets a TypeError/ValueError that says what to pass (issue 2)."""

from __future__ import annotations

import paddle
import pytest

from paddleviz_widget import GraphWidget, build_graph


@pytest.mark.parametrize("entry", [build_graph, GraphWidget], ids=["build_graph", "GraphWidget"])
@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        (3, TypeError, ["paddle.Tensor", "int"]),
        ("y", TypeError, ["paddle.Tensor", "str"]),
        ([], ValueError, ["empty list", "at least one"]),
        ((), ValueError, ["empty tuple"]),
        ({}, ValueError, ["empty dict"]),
    ],
)
def test_non_tensors_are_refused_with_a_hint(entry, bad, error, words):
    with pytest.raises(error) as info:
        entry(bad)
    message = str(info.value)
    for word in words:
        assert word in message
    assert "GraphWidget(model(x))" in message


def test_tensor_without_graph_names_the_fix():
    x = paddle.randn([2, 3])  # stop_gradient=True, no grad_fn
    with pytest.raises(ValueError) as info:
        build_graph(x * 2)
    message = str(info.value)
    assert "stop_gradient=True" in message and "no grad_fn" in message
    assert "stop_gradient=False" in message


def test_bad_item_in_list_is_named():
    w = paddle.create_parameter([2], "float32")
    with pytest.raises(TypeError, match=r"item 1 is a float"):
        build_graph([w * 2, 1.5])


def test_no_grad_output_is_refused():
    w = paddle.create_parameter([2], "float32")
    with paddle.no_grad():
        y = w * 2
    with pytest.raises(ValueError, match="no_grad"):
        GraphWidget(y)


def test_a_graph_that_cannot_be_built_leaves_no_widget_open():
    # GraphWidget(y) opens its comm before building the graph (the page loads meanwhile): a
    # failed build closes it again, so no half-made widget stays in the kernel or the page.
    from ipywidgets.widgets.widget import _instances

    before = set(_instances)
    with pytest.raises(TypeError):
        GraphWidget("y")
    assert set(_instances) == before


@pytest.mark.parametrize("bad", [5, None, {"run_dir": "runs/exp1"}], ids=["int", "None", "dict"])
def test_from_run_of_what_is_not_a_run_says_what_to_pass(bad):
    """It raised AttributeError: 'int' object has no attribute 'steps'."""
    with pytest.raises(TypeError, match=f"run log's directory .*not {type(bad).__name__}"):
        GraphWidget.from_run(bad)


@pytest.mark.parametrize("entry", [build_graph, GraphWidget], ids=["build_graph", "GraphWidget"])
def test_a_graph_given_for_tensors_points_to_from_graph(entry, tmp_path):
    # A graph document (what build_graph returned), a Graph, a saved .json path: each used to
    # get "value for key 'schema_version' is a str" or "expected a paddle.Tensor, got str".
    from paddleviz_widget.graph import Graph

    w = paddle.create_parameter([2], "float32")
    doc = build_graph((w * 2).sum())
    saved = tmp_path / "g.json"
    saved.write_text("{}")
    for given in (doc, Graph.from_dict(doc), str(saved), saved):
        with pytest.raises(TypeError) as info:
            entry(given)
        message = str(info.value)
        assert "GraphWidget.from_graph" in message, message
        assert "schema_version" not in message
