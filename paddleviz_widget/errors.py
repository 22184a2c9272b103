"""The package's own exceptions: every document or file it cannot read raises one of these.

All are ``ValueError`` subclasses (code that caught ``ValueError`` keeps working) and their
message names the file or the field that is wrong and what to do about it.

- ``PaddlevizError``: the base; catch it to catch any of them.
- ``GraphDocumentError``: a graph JSON document (any schema version) breaks the schema; the
  message starts with the field's path, e.g. ``edges[3].target``.
- ``SourceFileError``: a file or directory given as input (a Paddle dump, a Jittor trace, a
  call-site log) cannot be read; the message starts with the path.
- ``RunLogError``: a run log cannot be read (reserved for paddleviz_widget/runs/).
"""

from __future__ import annotations

import os
import reprlib

__all__ = ["GraphDocumentError", "PaddlevizError", "RunLogError", "SourceFileError", "shown"]


class PaddlevizError(ValueError):
    """Base of every error paddleviz_widget raises for input it cannot read."""


class GraphDocumentError(PaddlevizError):
    """A graph document breaks the schema. ``field`` is the path of the first broken field
    (``nodes[2].id``, ``edges[3].target``; empty for the document as a whole)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        super().__init__(f"{field}: {problem}" if field else problem)


class SourceFileError(PaddlevizError):
    """A file or directory given as input cannot be read. ``path`` is that file."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = os.fspath(path)
        super().__init__(f"{self.path}: {problem}")


class RunLogError(PaddlevizError):
    """A run log cannot be read (paddleviz_widget/runs/ defines what it checks)."""


def shown(value: object) -> str:
    """``value`` for an error message, short and safe: a hostile value (a 5,000-digit int, a
    list nested 5,000 deep) must not make the message itself fail."""
    if type(value) is int and value.bit_length() > 128:
        return f"<an integer of {value.bit_length()} bits>"
    try:
        return reprlib.repr(value)
    except (ValueError, RecursionError):
        return f"<a {type(value).__name__}>"
