"""The built front end (paddleviz_widget/static/, made by `npm run build`): one lookup for the
widget, the run explorer and the saved pages, and one message when it is missing."""

from __future__ import annotations

import os
from pathlib import Path

STATIC = Path(__file__).resolve().parents[1] / "static"
#: Both widgets' `_esm` (js/widget_loader.ts): it imports the explorer from the `_bundle` trait,
#: outside the 2 s anywidget gives a model's `_esm` before it drops the kernel's messages.
LOADER = "widget_loader.js"


def bundle(name: str) -> Path:
    """A file of the bundle (a Path: with ANYWIDGET_HMR=1 anywidget watches it)."""
    path = STATIC / name
    if not path.exists():
        raise RuntimeError(
            f"paddleviz_widget's front-end bundle ({path}) is missing. Install the package with "
            "'pip install .' (which builds it), or run 'npm ci && npm run build' in the source "
            "tree."
        )
    return path


def bundle_text(name: str) -> str:
    return bundle(name).read_text(encoding="utf-8")


def _hot_reload() -> bool:
    """anywidget's hot reload (DEVELOP.md) is on: it watches the `_esm` file."""
    return os.environ.get("ANYWIDGET_HMR") == "1"


def widget_asset(name: str) -> Path | str:
    """A widget's `_esm` or `_css` file: its text, or under hot reload its Path. anywidget
    turns a Path into a watched file and ties every instance to its change signal with a
    strong reference: every widget ever made (and its graph) would stay alive, closed or not.
    Text with a newline, which anywidget never takes for a file name."""
    if _hot_reload():
        return bundle(name)
    text = bundle_text(name)
    return text if "\n" in text else text + "\n"


def widget_esm(name: str) -> Path | str:
    """A widget's `_esm`: the loader, or, under hot reload, the explorer ``name`` itself (a
    file anywidget watches; the loader would only reload itself)."""
    return widget_asset(name if _hot_reload() else LOADER)


def bundle_source(name: str) -> str:
    """A widget's `_bundle` trait: the explorer ``name``'s source, which the loader imports
    (empty under hot reload, where `_esm` is the explorer)."""
    return "" if _hot_reload() else bundle_text(name)
