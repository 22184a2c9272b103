"""Graphs above REPLAY_MAX_NODES are not replayed (Paddle's replay of a 100k-node graph takes
longer than the build may): structure, groups and parameter shapes only, and a notice that
says why and how to get the rest."""

from __future__ import annotations

import paddle
import pytest
from models import LeNet
from paddle_versions import requires_dump

from paddleviz_widget import build_graph
from paddleviz_widget.tracer import build


@requires_dump
def test_a_graph_over_the_limit_is_not_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    paddle.seed(0)
    model = LeNet()
    y = model(paddle.randn([1, 3, 32, 32]))
    assert "dump" in build_graph(y)["meta"]["annotations"]
    monkeypatch.setattr(build, "REPLAY_MAX_NODES", 10)
    graph = build_graph(y, model=model)
    assert "dump" not in graph["meta"]["annotations"]
    assert graph["meta"]["notice"] == build.TOO_BIG_NOTICE.format(n=len(graph["nodes"]), limit=10)
    assert any(n.get("param") for n in graph["nodes"])  # names and shapes still there
