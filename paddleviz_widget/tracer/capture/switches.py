"""trace()'s on/off arguments checked when it is called: ``trace(model, stats="no")`` was read
as on (a non-empty string is true), ``call_sites="False"`` too, without a word."""

from __future__ import annotations

from typing import Any


def check_switches(**switches: Any) -> None:
    """Each of ``switches`` is True/False, or None (call_sites and slots: the automatic
    choice); a NumPy bool or 0/1 is taken as what it says."""
    for name, value in switches.items():
        if value is None:  # (stats=None: off, as it always was)
            continue
        if type(value).__name__ in ("bool", "bool_") or (type(value) is int and value in (0, 1)):
            continue
        raise TypeError(
            f"trace({name}=...) takes True or False, got {type(value).__name__} {value!r}"
        )
