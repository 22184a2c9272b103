"""Helpers shared by the benchmark scripts: timing, import path, quiet Paddle."""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (str(ROOT), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

warnings.filterwarnings("ignore")  # Paddle's ccache / BatchNorm notices are noise here


def timed(fn: Callable[[], Any], gc_off: bool = False) -> tuple[float, Any]:
    """(seconds, result) of one call.

    By default the collector is left as it is, as in a user's notebook: allocation-heavy code
    (like build_graph) triggers collections whose cost is part of what users wait for.
    ``gc_off`` collects first and keeps the collector off during the call: a lower bound.
    """
    if gc_off:
        gc.collect()
        gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        return time.perf_counter() - start, result
    finally:
        if gc_off:
            gc.enable()


def median_time(fn: Callable[[], Any], reps: int, gc_off: bool = False) -> float:
    return statistics.median(timed(fn, gc_off)[0] for _ in range(reps))


def json_bytes(graph: dict[str, Any]) -> int:
    return len(json.dumps(graph, separators=(",", ":")))


def ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.1f}"


def ratio(num: float | None, den: float | None) -> str:
    if num is None or den is None or den <= 0:
        return "n/a"
    return f"{num / den:.2f}x"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(
        h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(headers, widths))
    )
    print(line)
    print("-" * len(line))
    for row in rows:
        print(
            "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
        )
