"""The calling code's variables: a notebook's ``model`` or ``x``, by the name the user gave it."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

_OWN_PACKAGES = ("paddleviz_widget", "paddle")


def layers_in_calling_frames(layer_type: type) -> list[Any]:
    return list({id(v): v for _, v in in_calling_frames(layer_type)}.values())


def in_calling_frames(kind: type) -> list[tuple[str, Any]]:
    """(variable name, value) for every value of type ``kind`` in the calling frames' locals
    and globals, innermost frame first (a notebook's ``model`` or ``x``). Frames of this
    package and of Paddle are skipped: their variables are not the user's names."""
    found: list[tuple[str, Any]] = []
    scanned: set[int] = set()  # a module's globals serve many frames
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module.split(".")[0] in _OWN_PACKAGES:
            frame = frame.f_back
            continue
        for namespace in (frame.f_locals, frame.f_globals):
            if id(namespace) in scanned:
                continue
            scanned.add(id(namespace))
            found += [(k, v) for k, v in list(namespace.items()) if isinstance(v, kind)]
        frame = frame.f_back
    return found
