"""The run log's own error: the package's RunLogError (paddleviz_widget/errors.py), a
ValueError whose message names the run directory and the fix."""

from __future__ import annotations

from ..errors import RunLogError

__all__ = ["RunLogError"]
