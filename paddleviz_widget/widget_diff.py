"""``GraphWidget.diff(a, b)``: one widget showing how two backward graphs differ, and
``summary()`` on it as lists. Mixed into GraphWidget (widget.py); the diff itself is pure data
(graph/diff.py), the marks are drawn by the browser (js/view/diff.ts)."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any, Callable, ClassVar

from .gc_pause import gc_paused
from .graph.diff import DEFAULT_RTOL, diff_graphs, diff_summary
from .tracer import build_graph
from .widget_reports import GraphReports

_WHAT = (
    "pass a tensor (or a list/tuple/dict of them), a dict build_graph returned, or the path of a "
    ".json file holding one"
)


def is_diff(graph: Mapping[str, Any]) -> bool:
    meta = graph.get("meta")
    return isinstance(meta, Mapping) and isinstance(meta.get("diff"), Mapping)


def _is_document(value: Mapping[Any, Any]) -> bool:
    return "schema_version" in value or "nodes" in value or not value


def _from_file(path: str | os.PathLike[str], label: str) -> Any:
    file = pathlib.Path(path)
    if file.is_dir():
        raise ValueError(
            f"graph {label!r}: {str(file)!r} is a directory; for a Paddle backward dump pass "
            "paddleviz_widget.build_graph_from_dump(path), else the path of a .json file"
        )
    if not file.exists():
        raise FileNotFoundError(
            f"graph {label!r}: no file {str(file)!r}; save a graph with "
            "json.dump(build_graph(y), open(path, 'w')), or " + _WHAT
        )
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(
            f"graph {label!r}: {str(file)!r} is not a JSON graph document ({exc})"
        ) from exc


def _document(value: Any, label: str) -> Mapping[str, Any]:
    """The graph document ``value`` stands for: itself, a saved one, or the graph of tensors."""
    if isinstance(value, (str, os.PathLike)):
        value = _from_file(value, label)
    elif not (isinstance(value, Mapping) and _is_document(value)):
        try:
            return build_graph(value)
        except TypeError as exc:
            if isinstance(value, Mapping):  # neither a document nor a dict of tensors
                raise TypeError(
                    f"graph {label!r}: a dict with no 'schema_version' is not a graph document, "
                    f"nor a dict of tensors; {_WHAT}"
                ) from exc
            raise TypeError(f"graph {label!r}: {exc}") from exc
        except ValueError as exc:
            raise ValueError(f"graph {label!r}: {exc}") from exc
    if not isinstance(value, Mapping):
        raise ValueError(
            f"graph {label!r} holds a JSON {type(value).__name__}, not a graph: {_WHAT}"
        )
    return value


class GraphDiff(GraphReports):
    """Mixed into GraphWidget, before GraphReports: reads its ``graph`` trait only."""

    _of_payload: ClassVar[Callable[..., Any]]

    @classmethod
    def diff(
        cls,
        a: Any,
        b: Any,
        *,
        rtol: float = DEFAULT_RTOL,
        labels: Sequence[str] = ("a", "b"),
        height: str | int = "600px",
        depth: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """One graph showing how ``b`` differs from ``a``: nodes and edges only in b (added,
        green), only in a (removed, red dashed) and in both but not the same (changed, amber:
        dtype, shape, slot, or a gradient norm or max |g| that moved by more than ``rtol``
        relative to the larger, or a NaN/Inf count). ``a`` and ``b`` are tensors (or lists /
        dicts of them), graph documents as ``build_graph`` returns them, or paths of .json
        files holding one. Nodes are matched by parameter name, else by layer path, op name and
        position, never by pointer. ``summary()`` on the result lists the differences."""
        if isinstance(labels, str) or not isinstance(labels, Sequence) or len(labels) != 2:
            raise ValueError(f"labels must be two strings, one per graph, got {labels!r}")
        docs = [_document(value, str(label)) for value, label in zip((a, b), labels)]
        with gc_paused():  # it allocates ~10 small objects per GradNode, none in a cycle
            payload = diff_graphs(docs[0], docs[1], rtol=rtol, labels=labels)
        return cls._of_payload(payload, height, depth, kwargs)

    def summary(self) -> Any:
        """On a diff (``GraphWidget.diff``): a dict with the labels, ``rtol``, the counts and
        lists ``added``, ``removed`` and ``changed``, each entry naming the node or edge, its
        layer path, op and what changed (``a`` and ``b`` values). On any other graph: the
        per-layer table (type, parameters, GradNodes, gradient shapes in and out)."""
        if is_diff(self.graph):
            with gc_paused():
                return diff_summary(self.graph)
        return super().summary()
