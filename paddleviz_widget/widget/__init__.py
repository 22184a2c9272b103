"""The GraphWidget: the anywidget that shows a backward graph in Jupyter (see DEVELOP.md)."""

from .graph_widget import VIEWS, GraphWidget, ViewError
from .page_preload import preload_page

__all__ = ["VIEWS", "GraphWidget", "ViewError"]

# In a notebook whose front end runs widgets, the page starts the explorer now, while the
# user's next cells build the model, not on the first widget's cell (page_preload.py).
preload_page()
