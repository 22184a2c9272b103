"""build_graph's document (schema 2.2: tables and indices) read back in the nested 1.0 layout,
so that tests can say ``e["grad"]["shape"]`` or ``n["param"]["name"]``.

It goes through JSON text first, as the widget's copy does, and through the package's own
decoder, whose exactness tests/test_graph_codec.py checks.
"""

from __future__ import annotations

import json
from typing import Any

from paddleviz_widget import build_graph
from paddleviz_widget.graph import nested_dict


def nested(doc: dict[str, Any]) -> dict[str, Any]:
    """The nested (1.0) layout of a graph document."""
    return nested_dict(json.loads(json.dumps(doc)))


def nested_graph(y: Any, **kwargs: Any) -> dict[str, Any]:
    """``build_graph(y, **kwargs)`` in the nested layout."""
    return nested(build_graph(y, **kwargs))
