"""The sync protocol's kernel side: the view requests GraphWidget writes in ``_request``, as
plain functions of the dicts (graph_widget.py sets the traits; js/kernel_sync.ts is the
browser's side; DEVELOP.md draws the exchange).

The browser owns the view rules (group levels, a layer's separate calls, visible-node counts,
the automatic depth: js/view). The kernel asks, in ``_request``: open the groups to a depth
(-1: automatic), then apply these edits in order (["open", id], ["close", id], ["all"],
["set", ids]); each new depth starts a new request. The browser applies what it has not yet,
syncs ``depth`` and ``expanded`` back, and says how far it got in ``_resolved``. Each side
writes only its own trait, so a late message from the other never undoes it; ``expanded`` is
set by the kernel too, as a guess to read until the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def new_request(request: Mapping[str, Any], depth: int) -> dict[str, Any]:
    """The request after ``request``: open the groups to ``depth``, no edits yet."""
    return {"id": int(request.get("id", 0)) + 1, "depth": depth, "edits": []}


def with_edits(request: Mapping[str, Any], edits: Sequence[list[Any]]) -> dict[str, Any]:
    """``request`` with ``edits`` applied after its own."""
    return {**request, "edits": [*request.get("edits", []), *edits]}


def answered(request: Mapping[str, Any], resolved: Sequence[Any]) -> bool:
    """Whether the browser's ``_resolved`` says it applied the whole request."""
    return list(resolved) == [request.get("id"), len(request.get("edits", []))]
