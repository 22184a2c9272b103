"""Where does build_graph spend its time on the ~10k-node graph?  (a script, not a test)

    python benchmarks/profile_build.py [--model llama-10k] [--top 15]

Prints: cProfile (by own time), the garbage collections one call triggers and what they
cost, build_graph with the collector on vs off, and the floor set by Paddle's own accessors
(node_ptr / name / next_functions, walked with no bookkeeping).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import time
from typing import Any

from common import median_time
from models import MODELS

from paddleviz_widget import build_graph


def gc_during(fn: Any) -> dict[int, list[float]]:
    """Generation -> durations of the collections that ran during one call of ``fn``."""
    out: dict[int, list[float]] = {}
    start: list[float] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            start.append(time.perf_counter())
        elif start:
            out.setdefault(info["generation"], []).append(time.perf_counter() - start.pop())

    gc.callbacks.append(callback)
    try:
        fn()
    finally:
        gc.callbacks.remove(callback)
    return out


def accessor_floor(root: Any) -> None:
    """Visit every GradNode once touching only what any walk must call."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        fn = stack.pop()
        ptr = fn.node_ptr()
        if ptr in seen:
            continue
        seen.add(ptr)
        fn.name()
        stack.extend(n for n in fn.next_functions if n is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llama-10k", choices=list(MODELS))
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    model, x = MODELS[args.model]()
    y = model(x)
    nodes = len(build_graph(y)["nodes"])
    print(f"{args.model}: {nodes} GradNodes\n")

    profile = cProfile.Profile()
    profile.runcall(build_graph, y)
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)

    print("Collections during one build_graph call (3 calls):")
    for _ in range(3):
        runs = gc_during(lambda: build_graph(y))
        parts = [f"gen{g}: {len(d)} x = {sum(d) * 1e3:.1f} ms" for g, d in sorted(runs.items())]
        print("  " + (", ".join(parts) or "none"))
    print(f"  objects tracked by the collector: {len(gc.get_objects())}")

    on = median_time(lambda: build_graph(y), args.reps)
    off = median_time(lambda: build_graph(y), args.reps, gc_off=True)
    floor = median_time(lambda: accessor_floor(y.grad_fn), args.reps, gc_off=True)
    print(f"\nbuild_graph, collector on:  {on * 1e3:.1f} ms (median of {args.reps})")
    print(f"build_graph, collector off: {off * 1e3:.1f} ms")
    print(f"Paddle accessors alone:     {floor * 1e3:.1f} ms (the floor for any Python walk)")
    print(f"  -> GC share {1 - off / on:.0%}, Python bookkeeping {(off - floor) / on:.0%}")


if __name__ == "__main__":
    main()
