"""Graph documents handed to the widget's constructors: a dict as ``build_graph`` returns it,
the path of a saved ``.json`` file holding one, or (for ``diff``) tensors to build it from.
Each mistake gets an error naming the argument or the file, and what to pass."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Mapping
from typing import Any

from ..errors import GraphDocumentError
from ..graph.decode import decode_parts
from ..graph.model import Graph
from ..tracer import build_graph

_WHAT = (
    "pass a tensor (or a list/tuple/dict of them), a dict build_graph returned, or the path of a "
    ".json file holding one"
)
_SAVED = "pass a dict build_graph returned, or the path of a .json file holding one"


def is_document(value: Mapping[Any, Any]) -> bool:
    return "schema_version" in value or "nodes" in value or not value


def read_file(path: str | os.PathLike[str], label: str, what: str = _WHAT) -> Any:
    """The JSON in the file at ``path``; ``label`` names the argument in errors."""
    file = pathlib.Path(path).expanduser()  # ~: as open_run and from_dump read it
    if file.is_dir():
        raise ValueError(
            f"{label}: {str(file)!r} is a directory; for a Paddle backward dump pass "
            "paddleviz_widget.build_graph_from_dump(path), else the path of a .json file"
        )
    if not file.exists():
        raise FileNotFoundError(
            f"{label}: no file {str(file)!r}; save a graph with "
            "json.dump(build_graph(y), open(path, 'w')), or " + what
        )
    try:
        value = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{label}: {str(file)!r} is not a JSON graph document ({exc})") from exc
    if isinstance(value, Mapping) and is_document(value):
        _check_file(value, file, label)
    return value


def _check_file(doc: Mapping[str, Any], file: pathlib.Path, label: str) -> None:
    """A saved document checked as the page would (graph/decode.py): its error names the file,
    the field and the fix, where the page could name neither the file nor the fix. ~4x the
    JSON parse (0.13 s for 7,500 GradNodes), for files only."""
    try:
        decode_parts(doc)
    except GraphDocumentError as exc:
        problem = str(exc)
        fix = "" if "pip install -U" in problem else (
            "; the file was changed or damaged since it was saved, or not written by "
            "paddleviz_widget: save the graph again (w.save('graph.json'), or "
            "json.dump(build_graph(y), f))"
        )  # fmt: skip
        error = GraphDocumentError("", f"{label}: {str(file)!r}: {problem}{fix}")
        error.field = exc.field
        raise error from None


def saved_document(value: Any) -> Mapping[str, Any]:
    """``GraphWidget.from_graph``'s argument as a document: itself, the one saved at a path,
    or a ``Graph``'s. A dict is shown as it is (a broken one draws nothing and the page says
    why); a file is checked as it is read, its error naming the file and the fix."""
    label = "GraphWidget.from_graph"
    if isinstance(value, Graph):
        return value.to_dict()
    if isinstance(value, (str, os.PathLike)):
        value = read_file(value, label, _SAVED)
        if not isinstance(value, Mapping):
            raise ValueError(f"{label}: the file holds a JSON {type(value).__name__}, not a graph")
    elif not isinstance(value, Mapping):
        raise TypeError(
            f"{label} takes a graph document, not a {type(value).__name__}: {_SAVED} "
            "(for tensors: GraphWidget(y))"
        )
    elif not is_document(value):
        raise TypeError(
            f"{label}: a dict with no 'schema_version' is not a graph document: {_SAVED} "
            "(for tensors: GraphWidget(y))"
        )
    return value


def any_document(value: Any, label: str) -> Mapping[str, Any]:
    """The graph document ``value`` stands for: itself, a saved one, or the graph of tensors
    (``GraphWidget.diff``'s arguments; ``label`` names the one in errors)."""
    if isinstance(value, (str, os.PathLike)):
        value = read_file(value, f"graph {label!r}")
    elif not (isinstance(value, Mapping) and is_document(value)):
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
