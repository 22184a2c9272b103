"""The built front end (paddleviz_widget/static/, made by `npm run build`): one lookup for the
widget, the run explorer and the saved pages, and one message when it is missing."""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parents[1] / "static"


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
