"""A watched step's cost, this tree against another revision, swapped STEP BY STEP in one
watched run (a script, not a test)

    python benchmarks/bench_watch_paired.py --base main --model mlp --steps 13000

bench_watch_ab.py's blocks of a few hundred steps swing 0.85-1.45x on this shared machine
(the plain step itself 2.6-4.5 ms from one block to the next), so a difference of 1% between
revisions is not seen there. Here one run (every=10**9: no capture after step 0) alternates
the two revisions' per-step entries (bench_watch_ab's swap: the session's backward entry,
RunWatch.after_backward / between_captures / before_backward) from one step to the next,
and the whole step's thread CPU time (forward, backward, Adam's step, clear_grad) is paired
with the step before it: the median and the 10%-trimmed mean of those differences, beside
each revision's percentiles. Each revision's steps follow the other's as often, so what one
step leaves cold or warm for the next falls on both. The first --warm steps (the kernel's
compiling, the rules' warm-up window) are not counted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import bench_watch as bw
import bench_watch_ab as ab
import numpy as np

from paddleviz_widget import trace
from paddleviz_widget.runs import watch as this_watch
from paddleviz_widget.tracer.capture import session as this_session


def _before(watch: type, entries: tuple[object, ...]) -> tuple[object, ...]:
    return (*entries, watch.before_backward)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="git revision to compare against")
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--steps", type=int, default=13000)
    parser.add_argument("--warm", type=int, default=1000, help="steps not counted")
    args = parser.parse_args()
    sys.path.insert(0, str(ab._extract(args.base)))
    import pvw_base.runs.watch as base_watch  # type: ignore[import-not-found]
    import pvw_base.tracer.capture.session as base_session  # type: ignore[import-not-found]

    names = ("this tree", args.base)
    versions = {
        names[0]: _before(this_watch.RunWatch,
                          ab._entries(this_watch.RunWatch, this_session.TraceSession)),
        names[1]: _before(base_watch.RunWatch,
                          ab._entries(base_watch.RunWatch, base_session.TraceSession)),
    }  # fmt: skip
    own = versions[names[0]]
    took: dict[str, list[int]] = {name: [] for name in names}
    t = bw.Trainer(args.model)
    t.steps(5)
    run_dir = tempfile.mkdtemp(prefix="bench-paired-")
    try:
        with trace(t.model, stats=True, every=10**9, run_dir=os.path.join(run_dir, "run")):
            for i in range(args.steps):
                name = names[(i + i // 1000) % 2]  # (the pairs' order flips every 1000 steps)
                *entries, before = versions[name]
                ab._swap(tuple(entries))
                this_watch.RunWatch.before_backward = before  # type: ignore[method-assign]
                start = time.thread_time_ns()
                t.step()
                if i >= args.warm:
                    took[name].append(time.thread_time_ns() - start)
    finally:
        *entries, before = own
        ab._swap(tuple(entries))
        this_watch.RunWatch.before_backward = before  # type: ignore[method-assign]
        shutil.rmtree(run_dir, ignore_errors=True)
    n = min(len(v) for v in took.values())
    mine, base = (np.array(took[name][:n]) / 1e3 for name in names)
    diff = np.sort(mine - base)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.model}: {n} steps of each, alternated, load {load} (this thread's CPU, us)")
    for name, v in zip(names, (mine, base)):
        p10, p50, p90 = np.percentile(v, [10, 50, 90])
        print(f"  {name:<10} step mean {v.mean():7.1f}, p10 {p10:7.1f}, median {p50:7.1f}, "
              f"p90 {p90:7.1f}")  # fmt: skip
    trimmed = diff[n // 10 : n - n // 10].mean()
    print(f"  this tree - {args.base}, paired: median {np.median(diff):+.1f} us, "
          f"10%-trimmed mean {trimmed:+.1f} us a step")  # fmt: skip


if __name__ == "__main__":
    main()
