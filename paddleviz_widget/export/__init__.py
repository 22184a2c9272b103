"""Pictures of a graph without a browser: the explorer's default view as DOT (its view rules,
run in embedded V8), laid out by Graphviz's ``dot`` into SVG or PNG."""

from .errors import StaticPictureUnavailable
from .picture import render_picture
from .view_rules import StaticView, static_view, view_dot

__all__ = ["StaticPictureUnavailable", "StaticView", "render_picture", "static_view", "view_dot"]
