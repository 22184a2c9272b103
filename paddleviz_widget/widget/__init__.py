"""The GraphWidget: the anywidget that shows a backward graph in Jupyter (see DEVELOP.md)."""

from .graph_widget import VIEWS, GraphWidget, ViewError

__all__ = ["VIEWS", "GraphWidget", "ViewError"]
