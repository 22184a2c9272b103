"""GraphWidget's ``fold`` trait: on by default, off with ``fold=False``, synced to the page
(which owns the folding rules, js/view/folding.ts), and ``expand("model.layers.3")`` asks the page
to open a block of a folded run like any other group. The page's side is in
tests/browser/test_fold_browser.py."""

from __future__ import annotations

from pathlib import Path

import paddle
import pytest
import traitlets

from paddleviz_widget import GraphWidget

FIXTURES = Path(__file__).parent / "fixtures"


def tensor() -> paddle.Tensor:
    x = paddle.ones([2, 2])
    x.stop_gradient = False
    return (x * 2).sum()


def test_on_by_default_and_synced() -> None:
    w = GraphWidget(tensor())
    assert w.fold is True
    assert w.get_state()["fold"] is True


def test_off_with_fold_false_and_settable_later() -> None:
    w = GraphWidget(tensor(), fold=False)
    assert w.fold is False
    assert w.get_state()["fold"] is False
    w.fold = True
    assert w.get_state()["fold"] is True


def test_graphs_made_elsewhere_take_it_too() -> None:
    w = GraphWidget.from_jittor(FIXTURES / "jittor" / "simple_model.json", fold=False)
    assert w.get_state()["fold"] is False


def test_a_value_that_is_not_a_bool_names_the_trait() -> None:
    with pytest.raises(traitlets.TraitError, match="'fold' trait.*expected a boolean"):
        GraphWidget(tensor(), fold="no")


def test_expand_names_a_block_of_a_folded_run() -> None:
    w = GraphWidget.from_graph(FIXTURES / "graphs" / "repeats" / "llama_tiny.json")
    block = next(g for g in w.graph["groups"] if g["name"] == "model.layers.3")
    around = {g["id"] for g in w.graph["groups"] if g["name"] in ("model", "model.layers")}
    w.expand("model.layers.3")
    assert w._request["edits"] == [["open", block["id"]]]
    assert {block["id"], *around} <= set(w.expanded)
    assert w.fold is True  # opening a block leaves folding on for the others
