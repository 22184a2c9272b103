"""`w.expanded` and `w.selected` set in Python are checked against the graph. A layer path in
`expanded` (`w.expanded = ["2"]`, as `w.expand("2")` takes) sent the page an id it does not
know, opened nothing, and the kernel's `expanded` became [] without a word; a `selected` the
graph has not was kept and selected nothing. Now a layer path opens its groups, and anything
else is refused naming what the graph has, the trait keeping its value."""

from __future__ import annotations

import paddle
import pytest

from paddleviz_widget import GraphWidget, trace


@pytest.fixture(scope="module")
def widget():
    model = paddle.nn.Sequential(
        paddle.nn.Linear(4, 8), paddle.nn.ReLU(),
        paddle.nn.Sequential(paddle.nn.Linear(8, 3), paddle.nn.ReLU()), paddle.nn.Linear(3, 1),
    )  # fmt: skip
    with trace(model):
        y = model(paddle.randn([2, 4]))
        y.sum().backward()
    w = GraphWidget(y)
    yield w
    w.close()


def _group(widget, path: str) -> str:
    (gid,) = [g["id"] for g in widget.graph["groups"] if g["name"] == path]
    return gid


def test_a_layer_path_in_expanded_opens_its_group(widget):
    widget.expanded = ["2"]
    assert widget.expanded == [_group(widget, "2")]
    assert widget._request["edits"][-1] == ["set", [_group(widget, "2")]]
    widget.expanded = [_group(widget, "3")]  # ids as before
    assert widget.expanded == [_group(widget, "3")]


def test_what_the_graph_has_not_is_refused_and_the_trait_kept(widget):
    widget.expanded = [_group(widget, "0")]
    with pytest.raises(ValueError, match=r"expanded: no layer group 'zz' .*w.expand\(path\)"):
        widget.expanded = ["zz"]
    assert widget.expanded == [_group(widget, "0")]
    node = widget.graph["nodes"][1]["id"]
    widget.selected = node
    with pytest.raises(ValueError, match=r"selected: no node, edge or layer group 'n999'"):
        widget.selected = "n999"
    assert widget.selected == node
    widget.selected = ""
    assert widget.selected == ""


def test_the_pages_own_ids_are_taken(widget):
    # a folded run ("g3..g7", js/view/repeats.ts) and a merged edge ("n3-n7", js/view/visible.ts)
    first, last = widget.graph["groups"][1]["id"], widget.graph["groups"][2]["id"]
    widget.selected = f"{first}..{last}"
    assert widget.selected == f"{first}..{last}"
    widget.selected = "n1-n4"
    assert widget.selected == "n1-n4"
    with pytest.raises(ValueError, match="'zz'"):
        widget.selected = "zz..g1"
    widget.selected = ""


def test_a_depth_below_the_automatic_one_is_refused(widget):
    widget.depth = 1
    with pytest.raises(ValueError, match="depth: -7 is no level: 0 or more, or -1"):
        widget.depth = -7
    assert widget.depth == 1
    widget.depth = -1  # the automatic depth, as before
    assert widget.depth == -1
