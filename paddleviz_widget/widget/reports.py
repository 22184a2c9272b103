"""What a GraphWidget can say about its graph in words and tables, apart from drawing it:
``problems()`` and ``summary()``, from the graph document alone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..compat.stats_here import no_stats_here
from ..gc_pause import gc_paused
from ..graph.diff import diff_summary
from ..graph.model import Graph
from ..graph.parts import GraphParts
from ..graph.problems import (
    Problem,
    find_problems,
    has_statistics,
    problems_text,
    unchecked_edges,
    unchecked_reasons,
)
from ..graph.summary import Summary, summarize
from .diff import is_diff


class Problems(list[Problem]):  # a list that prints readably
    checked = True  # the graph had statistics to check (has_statistics)
    unchecked = 0  # edges with a gradient and no statistics (unchecked_edges)
    why: dict[str, int] | None = None  # the reasons such edges give (unchecked_reasons)
    not_checked: str | None = None  # unchecked, and this Paddle cannot make statistics: why

    def __str__(self) -> str:
        if not self.checked and self.not_checked and not any(self):
            return self.not_checked
        return problems_text(list(self), self.checked, self.unchecked, self.why)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def _parts(graph: Mapping[str, Any]) -> GraphParts:
    g = Graph.from_dict(graph)
    return GraphParts(g.nodes, g.edges, g.groups, g.meta)


def problems(graph: Mapping[str, Any]) -> Problems:
    parts = _parts(graph)
    found = Problems(find_problems(parts))
    found.checked = has_statistics(parts)
    found.unchecked = unchecked_edges(parts) if found.checked else 0
    found.why = unchecked_reasons(parts) if found.unchecked else None
    found.not_checked = None if found.checked else no_stats_here()
    return found


def summary(graph: Mapping[str, Any]) -> Summary | dict[str, Any]:
    """The differences of a diff (``GraphWidget.diff``), else the per-layer table."""
    if is_diff(graph):
        with gc_paused():
            return diff_summary(graph)
    return summarize(_parts(graph))
