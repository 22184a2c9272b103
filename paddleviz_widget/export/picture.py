"""DOT text -> SVG or PNG bytes, laid out by Graphviz's ``dot`` program."""

from __future__ import annotations

import shutil
import subprocess

import graphviz

from .errors import StaticPictureUnavailable

FORMATS = ("svg", "png")
#: Longest a layout may take: past it ``dot`` is killed (a huge graph must not hang a kernel).
TIMEOUT_S = 60.0
NO_DOT = "Graphviz's `dot` is not installed: apt install graphviz / conda install graphviz"
#: A PNG's resolution: 2x Graphviz's 96 dpi, as the page's PNG button (js/ui/export_buttons.ts).
#: At 96 dpi a saved .png was half the button's pixels, its 9 pt labels blurred on a 2x
#: screen or a slide; past the bitmap's limits Graphviz scales the picture down itself.
PNG_DPI = 192


def dot_found() -> bool:
    """Whether Graphviz's ``dot`` is on PATH (the command asks before a training run)."""
    return shutil.which(str(graphviz.backend.DOT_BINARY)) is not None


def render_picture(dot: str, fmt: str, *, timeout: float = TIMEOUT_S) -> bytes:
    """Lay ``dot`` out with Graphviz's ``dot`` and return the picture in ``fmt`` ("svg" or
    "png", at PNG_DPI). Raises ValueError for another format, and StaticPictureUnavailable (with a
    one-line reason) when ``dot`` is missing, fails or runs past ``timeout`` seconds."""
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(map(repr, FORMATS))}, got {fmt!r}")
    # The graphviz package's binary, run here rather than through Source.pipe: that has no
    # timeout, and a layout running past one could not be stopped.
    cmd = [
        str(graphviz.backend.DOT_BINARY),
        f"-T{fmt}",
        *([f"-Gdpi={PNG_DPI}"] if fmt == "png" else []),
    ]
    try:
        done = subprocess.run(
            cmd, input=dot.encode("utf-8"), capture_output=True, timeout=timeout, check=False
        )
    except FileNotFoundError as err:
        raise StaticPictureUnavailable(NO_DOT) from err
    except subprocess.TimeoutExpired as err:
        raise StaticPictureUnavailable(
            f"Graphviz took over {timeout:g} s to lay this graph out: draw fewer nodes "
            "(a smaller depth, or fewer expanded groups)"
        ) from err
    except OSError as err:
        raise StaticPictureUnavailable(f"Graphviz's `dot` could not run: {err}") from err
    if done.returncode != 0 or not done.stdout:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        raise StaticPictureUnavailable(f"Graphviz could not lay this graph out: {why}")
    return bytes(done.stdout)
