"""The run log's own error."""

from __future__ import annotations


class RunLogError(ValueError):
    """A run directory that cannot be read as a run log; the message names the path and the
    fix."""
