"""Why a static picture could not be made."""

from __future__ import annotations


class StaticPictureUnavailable(RuntimeError):
    """A static picture (DOT, SVG, PNG) could not be made; ``reason`` says why in one line."""

    def __init__(self, reason: str) -> None:
        self.reason = " ".join(str(reason).split()) or "unknown reason"
        super().__init__(self.reason)
