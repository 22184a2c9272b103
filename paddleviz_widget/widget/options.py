"""The keyword options of a widget's constructor, checked before the widget is made: a wrong
type or a misspelt name gets an error naming the option and the fix. traitlets alone takes
an unknown keyword with a DeprecationWarning Python hides (``GraphWidget(y, flod=False)``
drew folded, silently) and a ``depth="1"`` failed deep inside with "'<' not supported"."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any


def css_height(height: Any, *, what: str) -> str:
    """``height`` as the CSS height the page takes: pixels for a number (``700``), a CSS
    length as it is (``"700px"``, ``"60vh"``)."""
    if isinstance(height, bool) or not isinstance(height, (int, str)):
        raise TypeError(
            f"{what}: height is pixels (height=700) or a CSS height (height='60vh'), "
            f"got {type(height).__name__} {height!r}"
        )
    if isinstance(height, int):
        if height <= 0:
            raise ValueError(f"{what}: height must be > 0 pixels, got {height}")
        return f"{height}px"
    return height


def checked_depth(depth: Any, *, what: str) -> int | None:
    """``depth``: None (the page's automatic depth) or a whole number >= 0."""
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, int):
        raise TypeError(
            f"{what}: depth is how many levels of layer groups start open, a whole number "
            f">= 0 (depth=1), or None for the automatic depth; got {type(depth).__name__} "
            f"{depth!r}"
        )
    if depth < 0:
        raise ValueError(f"depth must be >= 0 (or None for automatic), got {depth}")
    return depth


def check_keywords(
    kwargs: Mapping[str, Any], traits: Iterable[str], named: Iterable[str], *, what: str
) -> None:
    """Every keyword is one of the widget's public ``traits`` (``fold=False``,
    ``view="forward"``; ipywidgets' ``layout`` too); any other is refused, naming the close
    matches and the ``named`` options (the widget's own, not ipywidgets' plumbing)."""
    known = sorted(t for t in traits if not t.startswith("_"))
    for name in kwargs:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        raise TypeError(
            f"{what} got an unexpected keyword argument {name!r}: {hint}its options are "
            f"{', '.join(sorted(named))}"
        )
