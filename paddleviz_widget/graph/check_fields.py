"""The field errors of the one document check (check.py, check_meta.py): each names the field
and says how to write it."""

from __future__ import annotations

from typing import Any

from ..errors import GraphDocumentError, shown

_FIX = "; write it as build_graph/Graph.to_dict would, or re-export it from the graph it came from"


def bad(field: str, problem: str) -> GraphDocumentError:
    return GraphDocumentError(field, problem + _FIX)


def text(value: Any, field: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if type(value) is not str:
        raise bad(field, f"is {shown(value)} ({type(value).__name__}), not a string")
