"""Pause Python's cyclic garbage collector while the tracer or a reader allocates many objects.

Parsing a large backward log or building a 10k-node graph creates hundreds of thousands of
short-lived objects that contain no cycles; with the collector on, full passes over the user's
whole heap took up to 70% of build_graph's time (benchmarks/profile_build.py).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: Given the function that turns the collector back on, calls it later; False if it cannot.
Resume = Callable[[Callable[[], None]], bool]


class Pause:
    """A running gc_paused() block: ``resume_with(later)`` has the collector turned back on by
    ``later`` instead of at the block's end, if the block ends without an exception."""

    later: Resume | None = None

    def resume_with(self, later: Resume) -> None:
        self.later = later


@contextmanager
def gc_paused() -> Iterator[Pause]:
    was_enabled = gc.isenabled()
    gc.disable()
    pause = Pause()
    try:
        yield pause
    except BaseException:
        if was_enabled:
            gc.enable()
        raise
    if was_enabled and not (pause.later is not None and pause.later(gc.enable)):
        gc.enable()
