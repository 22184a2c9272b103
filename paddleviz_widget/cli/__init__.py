"""The command line: ``python -m paddleviz_widget`` (main.py) and ``python -m
paddleviz_widget.run`` (run.py)."""

from .main import main

__all__ = ["main"]
