"""What GraphWidget.diff / graph.diff refuse: a ``stats=`` that is not a bool, and a diff
document handed back in as one of the two graphs. A diff holds the union of its two graphs
(what it marks removed is still a node of it), so comparing it again would count a's removed
layers as present and report "no differences" where there are some."""

from __future__ import annotations

import json
from typing import Any

import paddle
import paddle.nn as nn
import pytest

from paddleviz_widget import GraphWidget, build_graph, trace
from paddleviz_widget.graph.diff import diff_graphs, diff_summary


class Net(nn.Layer):
    def __init__(self, branch: bool) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.extra = nn.Linear(8, 4) if branch else None

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        y = self.fc(x)
        return y if self.extra is None else y + self.extra(x)


def traced(model: nn.Layer) -> dict[str, Any]:
    with trace(model):
        y = model(paddle.randn([2, 8]))
        y.sum().backward()
    return build_graph(y)


def test_a_diff_document_is_refused_as_either_graph_naming_it(tmp_path: Any) -> None:
    plain, branched = traced(Net(False)), traced(Net(True))
    union = diff_graphs(branched, plain, labels=("v1", "v2"))
    removed = diff_summary(union)["removed"]
    assert {e.get("param") for e in removed} >= {"extra.weight", "extra.bias"}  # v2 lacks it
    # Compared again with v1, the union would match every node of v1: "no differences".
    for args, label in (((union, branched), "a"), ((branched, union), "b")):
        with pytest.raises(
            ValueError, match=rf"graph '{label}' is already a diff of 'v1' and 'v2'"
        ):
            diff_graphs(*args)
    path = tmp_path / "v1_vs_v2.json"
    path.write_text(json.dumps(union))
    with pytest.raises(
        ValueError, match=r"graph 'old' is already a diff .*build_graph\(y\) of each"
    ):
        GraphWidget.diff(str(path), plain, labels=("old", "new"))


def test_stats_must_be_a_bool() -> None:
    plain = traced(Net(False))
    with pytest.raises(TypeError, match="stats must be True or False, got 'no'"):
        diff_graphs(plain, plain, stats="no")  # type: ignore[arg-type]
