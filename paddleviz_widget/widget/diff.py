"""``GraphWidget.diff(a, b)``: one graph document showing how two backward graphs differ. The
diff itself is pure data (graph/diff.py); the marks are drawn by the browser (js/view/diff.ts);
``summary()`` on such a widget lists the differences (reports.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..gc_pause import gc_paused
from ..graph.diff import diff_graphs
from .documents import any_document


def is_diff(graph: Mapping[str, Any]) -> bool:
    meta = graph.get("meta")
    return isinstance(meta, Mapping) and isinstance(meta.get("diff"), Mapping)


def diff_document(
    a: Any, b: Any, *, rtol: float, labels: Sequence[str], stats: bool = True
) -> dict[str, Any]:
    """The diff of ``a`` and ``b`` (tensors, documents or paths of saved ones)."""
    if isinstance(labels, str) or not isinstance(labels, Sequence) or len(labels) != 2:
        raise ValueError(f"labels must be two strings, one per graph, got {labels!r}")
    docs = [any_document(value, str(label)) for value, label in zip((a, b), labels)]
    with gc_paused():  # it allocates ~10 small objects per GradNode, none in a cycle
        return diff_graphs(docs[0], docs[1], rtol=rtol, labels=labels, stats=stats)
