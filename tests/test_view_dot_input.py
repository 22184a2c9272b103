"""view_dot / static_view (README "Static pictures") refuse what is not a graph document:
`view_dot({})` and `view_dot(None)` returned an empty digraph and `save_graph({}, "g.svg")`
wrote an empty picture, without a word (the view rules read {} as the widget's "no graph
yet"). A Graph is named with the call that gives its document."""

from __future__ import annotations

import paddle
import pytest

from paddleviz_widget import GraphDocumentError, build_graph
from paddleviz_widget.export import view_dot
from paddleviz_widget.export.save import save_graph
from paddleviz_widget.graph import Graph


@pytest.fixture(scope="module")
def doc():
    model = paddle.nn.Linear(3, 2)
    return build_graph(model(paddle.randn([2, 3])).sum(), model=model)


@pytest.mark.parametrize(
    ("bad", "said"),
    [({}, "an empty dict"), (None, "a NoneType"), ({"nodes": []}, "a dict with no schema_version")],
)
def test_what_is_not_a_document_is_refused(bad, said, tmp_path):
    with pytest.raises(GraphDocumentError, match=f"take a graph document, got {said}: pass"):
        view_dot(bad)
    with pytest.raises(GraphDocumentError):
        save_graph(bad or {}, tmp_path / "g.svg")
    assert list(tmp_path.iterdir()) == []


def test_a_graph_is_named_with_its_document_call(doc):
    with pytest.raises(GraphDocumentError, match=r"a Graph \(its .to_dict\(\) is the document\)"):
        view_dot(Graph.from_dict(doc))


def test_a_document_draws_its_nodes(doc):
    dot = view_dot(doc)
    for node in doc["nodes"]:
        assert f'"pvw-{node["id"]}"' in dot
