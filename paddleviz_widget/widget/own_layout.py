"""A widget's close() that also closes the Layout model it opened with itself.

ipywidgets' DOMWidget opens a Layout model next to each widget and its close() leaves it
open: one comm and one page model a widget, for good, in a kernel that makes and closes
widgets for hours. A Layout the user passed in is theirs (other widgets may share it) and stays.
"""

from __future__ import annotations

from typing import Any


class ClosesOwnLayout:
    """Mixed in before anywidget.AnyWidget."""

    _own_layout: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        given = "layout" in kwargs
        super().__init__(*args, **kwargs)
        self._own_layout = None if given else self.layout  # type: ignore[attr-defined]

    def close(self) -> None:
        own, self._own_layout = self._own_layout, None
        super().close()  # type: ignore[misc]
        if own is not None:
            own.close()
