"""``GraphWidget.save(path)``: the view on screen, written to a file. Kept apart from widget.py,
which is the synced widget; the formats are export/save.py's, the view rules js/view's."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Mapping
from typing import Any

from ..export.save import check_target, save_graph

PICTURES = (".dot", ".svg", ".png")


class GraphExport:
    """Mixed into GraphWidget: reads its ``graph`` and view traits only."""

    graph: Mapping[str, Any]
    expanded: list[str]
    view: str
    _request: dict[str, Any]
    _answered: Callable[[], bool]
    _static_wanted: Callable[[], dict[str, Any]]  # widget_static.StaticFallback

    def save(self, path: str | os.PathLike[str]) -> pathlib.Path:
        """Save the graph and the view now shown to ``path``; returns it as a Path. The
        suffix picks what is written:

        - ``.json``: the graph document, exactly what ``build_graph`` returns (whatever the view);
        - ``.dot``: the Graphviz source of this view (its open layer groups, folded blocks,
          reading, direction, edge labels, gradient colours and statistics step);
        - ``.svg`` / ``.png``: the picture of this view, laid out by Graphviz's ``dot``;
        - ``.html``: the explorer as one self-contained file (works offline, no kernel), opening
          on this view's open layer groups.

        The file appears whole or not at all. Before the widget is shown, the view is the one
        the page will open on. Raises ValueError for any other suffix, and
        ``StaticPictureUnavailable`` (saying why) when a picture cannot be made here.
        """
        suffix = check_target(path).suffix.lower()
        if suffix == ".json":
            return save_graph(self.graph, path)
        if suffix not in PICTURES:
            return save_graph(self.graph, path, expanded=self._open_groups())
        # The view the page shows, as the static picture of a saved notebook has it (one
        # account of it: widget_static.py): groups, folding, reading, direction, colours.
        wanted = self._static_wanted()
        expanded, depth = wanted.pop("expanded", None), wanted.pop("depth", None)
        return save_graph(self.graph, path, expanded=expanded, depth=depth, options=wanted)

    def _open_groups(self) -> list[str]:
        """The open layer groups: the page's, once it has applied the kernel's request; before
        that, those the request will open (a depth, then edits), as the view rules work out."""
        if self._answered():
            return list(self.expanded)
        from ..export.view_rules import static_view

        request = self._request
        view = static_view(
            self.graph,
            depth=int(request.get("depth", -1)),
            options={"edits": list(request.get("edits", []))},
        )
        return view.expanded
