"""``GraphWidget.save(path)``: the view on screen, written to a file. The formats are
export/save.py's, the view rules js/view's (run in the kernel by export/view_rules.py)."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping
from typing import Any

from ..export.save import check_target, save_graph
from ..export.view_rules import static_view

PICTURES = (".dot", ".svg", ".png")


def save_view(
    graph: Mapping[str, Any], path: str | os.PathLike[str], view: Mapping[str, Any]
) -> pathlib.Path:
    """Write ``graph`` to ``path`` as its suffix says, in ``view`` (static_picture.view_now:
    the view the page shows, or will once it has applied the kernel's request)."""
    suffix = check_target(path).suffix.lower()
    if suffix == ".json":
        return save_graph(graph, path)
    wanted = dict(view)
    expanded, depth = wanted.pop("expanded", None), wanted.pop("depth", None)
    if suffix in PICTURES:  # the view as the static picture of a saved notebook has it
        return save_graph(graph, path, expanded=expanded, depth=depth, options=wanted)
    if expanded is None:  # the groups the page's pending request will open
        edits = list(wanted.get("edits", []))
        pending = {"edits": edits, "fold": wanted.get("fold", True)}
        expanded = static_view(graph, depth=int(depth), options=pending).expanded
    return save_graph(graph, path, expanded=expanded, options=wanted)
