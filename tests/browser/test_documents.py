"""The widget reads the graph document it is sent (js/view/payload.ts): schema 2.x, a saved 1.0
one, and a broken one, which draws nothing and says why in the status line without taking the
widget down. On LeNet (tests/browser/notebooks/explorer.ipynb), expected values from the
kernel's own payload."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from explorer_page import Explorer, explorer_page
from fixtures.graphs.payload import visible_nodes
from graph_dicts import nested

NOTEBOOK = "explorer.ipynb"


@pytest.fixture(scope="module")
def explorer(chromium_browser, lab_server) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as page:
        page.run("good = w.graph")
        yield page


@pytest.fixture
def fresh(explorer: Explorer) -> Iterator[Explorer]:
    explorer.reset()
    yield explorer
    explorer.run("w.graph = good")


def drawn_as_expected(explorer: Explorer, graph: dict[str, Any]) -> None:
    expanded = set(explorer.value("w.expanded"))
    assert expanded, "the notebook's LeNet should open some groups"
    assert explorer.node_ids() == {f"pvw-{i}" for i in visible_nodes(graph, expanded)}


def test_a_saved_1_0_document_draws_the_same_picture(fresh: Explorer) -> None:
    graph = nested(fresh.value("good"))
    fresh.run("from paddleviz_widget.graph import nested_dict")
    fresh.redrawn(lambda: fresh.run("w.graph = nested_dict(good)"))
    assert fresh.value("w.graph['schema_version']") == "1.0"
    drawn_as_expected(fresh, graph)
    assert fresh.page.get_by_test_id("pvw-message").is_hidden()


def test_a_broken_document_says_why_and_a_good_one_draws_again(fresh: Explorer) -> None:
    good = fresh.value("good")
    graph = nested(good)
    message = fresh.page.get_by_test_id("pvw-message")
    broken = {
        "{**good, 'schema_version': '9.9'}": (
            'Cannot show this graph: graph schema_version "9.9" is a newer paddleviz_widget\'s '
            "(this widget reads '2.3', '2.2', '2.1', '2.0' and '1.0'): upgrade it "
            "(pip install -U paddleviz_widget)"
        ),
        "{**good, 'edges': [{**good['edges'][0], 'grad': 10**6}, *good['edges'][1:]]}": (
            f"Cannot show this graph: edge {good['edges'][0]['id']}: tensor index 1000000 is "
            f"out of range (table has {len(good['tensors'])})"
        ),
        # The same rules as Graph.from_dict (tests/fixtures/broken/graph_documents.json).
        "{**good, 'edges': [{**good['edges'][0], 'target': 'n999'}, *good['edges'][1:]]}": (
            'Cannot show this graph: edges[0].target: "n999" is not the id of a node'
        ),
        "{**good, 'nodes': [good['nodes'][0], {**good['nodes'][1], 'id': good['nodes'][0]['id']},"
        " *good['nodes'][2:]]}": (
            f'Cannot show this graph: nodes[1].id: "{good["nodes"][0]["id"]}" is the id of an '
            "earlier entry too"
        ),
    }
    for doc, text in broken.items():
        fresh.redrawn(lambda doc=doc: fresh.run(f"w.graph = {doc}"))
        message.wait_for(state="visible")
        assert message.inner_text() == text
        assert fresh.node_ids() == set()  # an empty drawing; toolbar and status line still work
        assert fresh.page.get_by_test_id("pvw-toolbar").is_visible()
        fresh.redrawn(lambda: fresh.run("w.graph = good"))
        assert message.is_hidden()
        drawn_as_expected(fresh, graph)


def test_a_bidi_override_in_a_layer_name_shows_escaped(fresh: Explorer) -> None:
    fresh.run(
        "w.graph = {**good, 'groups': [{**good['groups'][0], 'name': 'ad\\u202enimda'},"
        " *good['groups'][1:]]}"
    )
    page = fresh.page
    page.wait_for_function(
        "() => [...document.querySelectorAll('svg text')].some("
        "(t) => t.textContent.includes('ad\\\\u202enimda'))",
        timeout=30_000,
    )
    shown = page.evaluate("() => document.body.innerText + document.querySelector('svg').innerHTML")
    assert "\u202e" not in shown  # in the page text, status line and SVG alike
    fresh.redrawn(lambda: fresh.run("w.graph = good"))
