"""The page's request for a widget's state again (js/anywidget_deadline.ts): anywidget drops
every kernel message to a model whose front end missed its 2 s start-up deadline (a starved
page), so the graph or a view request sent meanwhile never arrived. The page takes the
kernel's messages again, then asks; the kernel sends the state it holds now, which restores
whatever was dropped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: What the page sends (anywidget_deadline.ts RESEND).
RESEND = "pvw-resend"
#: anywidget's own keys (the loader, the explorer's source, the styles): set before the comm
#: opened, never since, and the largest (the explorer, 1.1 MB).
_OPENED_WITH = frozenset({"_esm", "_css", "_bundle", "_anywidget_id"})


def is_resend(content: Any) -> bool:
    return isinstance(content, Mapping) and content.get("type") == RESEND


def resend_state(widget: Any) -> None:
    """Send the page every synced key of ``widget`` but anywidget's own, as they are now."""
    widget.send_state([key for key in widget.keys if key not in _OPENED_WITH])
