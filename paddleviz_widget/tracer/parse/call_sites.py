"""Parse Paddle's ``*_call_stack.log`` into GradNode ptr -> CallSite (innermost user frame).

Paddle writes the log when ``backward(dump_backward_graph_path=DIR)`` runs and fills the stacks
only if ``FLAGS_call_stack_level=3`` was set before the forward. One entry per GradNode::

    GradNodeBase MatmulGradNode ptr : 0x562c1f16ffe0 call stack:
      File "/home/me/net.py", line 26, in forward
        return self.fc(feature)
      File ".../site-packages/paddle/nn/layer/layers.py", line 1833, in __call__
        ...

Frames run outermost first, like a traceback. Some nodes (e.g. Conv2dGradNodeFinal) get an empty
stack; an accumulation node's stack is where its parameter was created. Pure text in, data out.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...graph.model import CallSite

_HEADER = re.compile(
    r"^\s*(?:GradNodeBase\s+)?(?P<name>\S+)\s+ptr\s*:\s*"
    r"(?P<ptr>0[xX][0-9a-fA-F]{1,16}|\d{1,20})\b"
)
_FRAME = re.compile(
    r'^\s*File "(?P<file>.*)", line (?P<line>\d{1,18})(?:, in (?P<function>.*?))?\s*$'
)
# Paddle installed anywhere (also a log recorded on another machine).
_PADDLE_IN_PACKAGES = re.compile(r"[\\/](?:site|dist)-packages[\\/]paddle[\\/]")
_PACKAGES = re.compile(r"[\\/](?:site|dist)-packages[\\/]")


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str | None = None


@dataclass(frozen=True)
class StackEntry:
    """One GradNode's record in the log; ``frames`` outermost first (empty if not recorded)."""

    name: str
    ptr: int
    frames: tuple[Frame, ...]


def _package_dir(name: str) -> str | None:
    try:  # find_spec on a top-level name locates the package without importing it
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return locations[0] if locations else None


@lru_cache(maxsize=1)
def default_library_dirs() -> tuple[str, ...]:
    """Directories whose frames are never "user code": paddle, paddleviz_widget, stdlib."""
    dirs = [_package_dir("paddle"), str(Path(__file__).resolve().parents[1])]
    paths = sysconfig.get_paths()
    dirs += [paths.get("stdlib"), paths.get("platstdlib")]
    found: list[str] = []
    for d in dirs:
        if not d:
            continue
        for variant in (os.path.abspath(d), os.path.realpath(d)):
            if variant not in found:
                found.append(variant)
    return tuple(found)


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("\\/") + os.sep)


def is_library_file(filename: str, library_dirs: Sequence[str] | None = None) -> bool:
    """True for frames of paddle, paddleviz_widget and Python itself (not the user's code)."""
    if filename.startswith("<frozen"):
        return True
    if _PADDLE_IN_PACKAGES.search(filename):
        return True
    dirs = default_library_dirs() if library_dirs is None else library_dirs
    # Third-party packages can sit inside the stdlib dir (lib/python3.x/site-packages).
    return any(_under(filename, d) and not _PACKAGES.search(filename[len(d) :]) for d in dirs)


def innermost_user_frame(
    frames: Iterable[Frame], library_dirs: Sequence[str] | None = None
) -> Frame | None:
    """The last (innermost) frame outside the library dirs, or None if there is none."""
    found = None
    for frame in frames:
        if not is_library_file(frame.file, library_dirs):
            found = frame
    return found


def _to_text(text: Any) -> str:
    if isinstance(text, bytes):
        return text.decode("utf-8", errors="replace")
    return text if isinstance(text, str) else ""


def parse_call_stack_entries(text: Any, unread: list[str] | None = None) -> list[StackEntry]:
    """Every GradNode record in the log, in file order. Lines it doesn't know are skipped;
    header or frame lines it could not read (a 5,000-digit line number, a 40-digit ptr) are
    appended to ``unread`` when given, for a notice."""
    entries: list[StackEntry] = []
    name: str | None = None
    ptr = 0
    frames: list[Frame] = []

    def flush() -> None:
        if name is not None:
            entries.append(StackEntry(name, ptr, tuple(frames)))

    for raw in _to_text(text).splitlines():
        header_like = "ptr" in raw and "call stack" in raw
        header = _HEADER.match(raw) if header_like else None
        if header_like and header is None:  # unreadable: its frames belong to no GradNode
            flush()
            name = None
            if unread is not None:
                unread.append(raw)
            continue
        if header:
            flush()
            name, frames = header["name"], []
            text_ptr = header["ptr"]
            ptr = int(text_ptr, 16) if text_ptr.lower().startswith("0x") else int(text_ptr)
            continue
        frame = _FRAME.match(raw)
        if frame and name is not None:
            frames.append(Frame(frame["file"], int(frame["line"]), frame["function"]))
        elif unread is not None and not frame and raw.lstrip().startswith('File "'):
            unread.append(raw)  # a frame the pattern refused (e.g. a 5,000-digit line)
    flush()
    return entries


def parse_call_stack_log(
    text: Any, *, library_dirs: Sequence[str] | None = None
) -> dict[int, CallSite]:
    """GradNode ptr -> CallSite of the innermost frame in user code.

    Nodes without a recorded stack, or whose stack is all library code, are left out. For an
    accumulation node the site is where its parameter was created. Never raises: odd input
    yields what could be read (possibly ``{}``): the patterns admit only what ``int`` reads.
    """
    sites: dict[int, CallSite] = {}
    for entry in parse_call_stack_entries(text):
        frame = innermost_user_frame(entry.frames, library_dirs)
        if frame is not None and entry.ptr not in sites:
            sites[entry.ptr] = CallSite(frame.file, frame.line, frame.function)
    return sites
