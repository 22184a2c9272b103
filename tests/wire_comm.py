"""A comm whose wire is a list: what a widget publishes to the page, buffers too, as the tests
of the kernel's side of the widgets read it (no front end)."""

from __future__ import annotations

from typing import Any

from comm.base_comm import BaseComm


class WireComm(BaseComm):
    def __init__(self, **kwargs: Any) -> None:
        self.published: list[tuple[Any, list[bytes]]] = []
        super().__init__(target_name="jupyter.widget", **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None,
                    buffers: Any = None, **keys: Any) -> None:  # fmt: skip
        self.published.append((data, [bytes(b) for b in buffers or []]))
