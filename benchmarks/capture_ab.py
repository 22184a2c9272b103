"""One full capture step, this tree against another revision, in ONE process (a script, not a
test):

    cd benchmarks && PYTHONPATH=.. python capture_ab.py --base main --model llama-10k --reps 4

Two processes minutes apart on a shared machine see different loads; here the other
revision's package is extracted under another name (bench_watch_ab._extract: ``pvw_base``)
and the two ``trace(model, stats=True, every=1, run_dir=...)`` take turns (the order flips
each repetition), each block a fresh run: one untimed step (step 0), then --steps captured
steps, next to a block of plain steps. Printed per tree: the captured step's and the plain
step's CPU time (medians; the process's and the main thread's) and their ratio, with the load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from statistics import median

import bench_watch as bw
from bench_watch_ab import _extract

import paddleviz_widget


def _captured(t: bw.Trainer, trace: object, steps: int) -> tuple[float, float]:
    """(process, main thread) CPU seconds per captured step (the run's exit included, as
    bench_watch)."""
    path = t.run_dir()
    with trace(t.model, stats=True, every=1, run_dir=path):  # type: ignore[operator]
        t.step()
        start, thread = time.process_time(), time.thread_time()
        for _ in range(steps):
            t.step()
    took = (time.process_time() - start) / steps, (time.thread_time() - thread) / steps
    shutil.rmtree(path, ignore_errors=True)
    return took


def _plain(t: bw.Trainer, steps: int) -> tuple[float, float]:
    start, thread = time.process_time(), time.thread_time()
    t.steps(steps)
    return (time.process_time() - start) / steps, (time.thread_time() - thread) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--model", default="llama-10k")
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    sys.path.insert(0, str(_extract(args.base)))
    import pvw_base  # type: ignore[import-not-found]

    traces = {"this tree": paddleviz_widget.trace, args.base: pvw_base.trace}
    t = bw.Trainer(args.model)
    t.steps(3)
    for trace in traces.values():  # each tree's first run (imports, caches) untimed
        _captured(t, trace, 1)
    cap: dict[str, list[tuple[float, float]]] = {k: [] for k in traces}
    plain: dict[str, list[tuple[float, float]]] = {k: [] for k in traces}
    loads = [os.getloadavg()[0]]
    for rep in range(args.reps):
        order = list(traces) if rep % 2 == 0 else list(reversed(traces))
        for name in order:
            plain[name].append(_plain(t, args.steps))
            cap[name].append(_captured(t, traces[name], args.steps))
        loads.append(os.getloadavg()[0])
    for name in traces:
        for k, what in enumerate(("process", "main thread")):
            c, p = median(x[k] for x in cap[name]), median(x[k] for x in plain[name])
            each = ", ".join(f"{x[k] / y[k]:.2f}" for x, y in zip(cap[name], plain[name]))
            print(f"{args.model} {name:<10} {what:<11} CPU: captured step {c * 1e3:5.0f} ms, "
                  f"plain {p * 1e3:4.0f} ms, {c / p:.2f}x (by repetition: {each})")  # fmt: skip
    print(f"load {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    main()
