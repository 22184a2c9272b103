"""Pause Python's cyclic garbage collector while the tracer or a reader allocates many objects.

Parsing a large backward log or building a 10k-node graph creates hundreds of thousands of
short-lived objects that contain no cycles; with the collector on, full passes over the user's
whole heap took up to 70% of build_graph's time (benchmarks/profile_build.py).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
