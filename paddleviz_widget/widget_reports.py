"""What a GraphWidget can say about its graph in words and tables, apart from drawing it:
``problems()`` and ``summary()``. Kept apart from widget.py, which is the synced widget."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .graph.model import Graph
from .graph.parts import GraphParts
from .graph.problems import Problem, find_problems, problems_text
from .graph.summary import Summary, summarize


class Problems(list[Problem]):  # a list that prints readably
    def __str__(self) -> str:
        return problems_text(list(self))

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


class GraphReports:
    """Mixed into GraphWidget: reads its ``graph`` trait only."""

    graph: Mapping[str, Any]

    def _parts(self) -> GraphParts:
        g = Graph.from_dict(self.graph)
        return GraphParts(g.nodes, g.edges, g.groups, g.meta)

    def problems(self) -> list[Problem]:
        """What looks wrong in the gradients, in words, each naming the layer path, the
        parameter or GradNode and the call site: where the first NaN/Inf was made (forward
        layer or backward GradNode), exploding and vanishing gradients, where all-zero
        gradients start, parameters no gradient reaches; frozen parameters as information,
        after the problems. Rules: graph/problems/. Needs ``trace(model, stats=True)``."""
        return Problems(find_problems(self._parts()))

    def summary(self) -> Summary:
        """The per-layer table (type, parameters, GradNodes, gradient shapes in and out).
        Parameter counts are those of the parameters in this graph; for the model's own
        (frozen and hidden ones included) use ``paddleviz_widget.summary(y, model=model)``."""
        return summarize(self._parts())
