"""The per-step work of a watched run, this tree against another revision, in ONE process
(a script, not a test)

    python benchmarks/bench_watch_ab.py --base main --model mlp --reps 10 --block 1000
    python benchmarks/bench_watch_ab.py --base main --model mlp --reps 6 --block 100 --run 1000
    python benchmarks/bench_watch_ab.py --base main --model llama-10k --reps 6 --block 5

On a shared machine two processes run minutes apart see different loads; ratios of a few
percent between revisions drown in that. Here the other revision's package is extracted
(``git archive REV paddleviz_widget``) under another name (``pvw_base``: the package imports
itself relatively) and its ``RunWatch.start`` / ``after_backward`` (the summary, the anomaly
rules, the run log writer: everything a step runs after backward) and the session's
``TraceSession._backward`` (the checks before the backward, the watched step's calls around
it) are swapped in for its blocks (a step between captures of a tree with
``RunWatch.between_captures`` goes there: the base's goes to its after_backward). Blocks
alternate (plain, this tree, plain, base; the order flips each repetition); each watched
block is a run with every=10**9 whose step 0 (a full capture) is untimed; with --run, an
N-step run with every=100 (entry, captures, exit) follows each against N plain steps.
Printed: summary / plain in wall and process CPU time (medians), and the median CPU time of
this thread per step's record (after_backward or between_captures).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path
from statistics import median
from typing import Any

import bench_watch as bw
from scratch import scratch_dir

from paddleviz_widget.runs import watch as this_watch
from paddleviz_widget.tracer.capture import session as this_session


def _extract(rev: str) -> Path:
    """REV's package as pvw_base in a temporary directory (put on sys.path)."""
    root = Path(__file__).resolve().parent.parent
    data = subprocess.run(["git", "-C", str(root), "archive", rev, "paddleviz_widget"],
                          check=True, capture_output=True).stdout  # fmt: skip
    out = scratch_dir("pvw-ab-")
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(out, filter="data")
    (out / "paddleviz_widget").rename(out / "pvw_base")
    return out


def _timed(fn: Any, calls: list[int]) -> Any:
    def after_backward(self: Any, roots: Any, **kw: Any) -> Any:
        start = time.thread_time_ns()
        try:
            return fn(self, roots, **kw)
        finally:
            if not kw.get("full"):
                calls.append(time.thread_time_ns() - start)

    return after_backward


def _entries(watch: Any, session: Any, calls: list[int] | None = None) -> tuple[Any, ...]:
    """A tree's (RunWatch.start, after_backward, between_captures, TraceSession._backward),
    the per-step record timed into ``calls`` (none: as they are). A tree without
    between_captures records those steps in after_backward."""
    after = watch.after_backward
    between = getattr(watch, "between_captures", None)
    if between is None:
        between = _timed_between(after, calls) if calls is not None else None
    elif calls is not None:
        between = _timed_between(between, calls)
    timed = _timed(after, calls) if calls is not None else after
    return watch.start, timed, between, session._backward


def _timed_between(fn: Any, calls: list[int]) -> Any:
    def between_captures(self: Any, roots: Any) -> Any:
        start = time.thread_time_ns()
        try:
            return fn(self, roots)
        finally:
            calls.append(time.thread_time_ns() - start)

    return between_captures


def _swap(entries: tuple[Any, ...]) -> None:
    start, after, between, backward = entries
    this_watch.RunWatch.start, this_watch.RunWatch.after_backward = start, after
    this_watch.RunWatch.between_captures = between  # type: ignore[method-assign]
    this_session.TraceSession._backward = backward  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="git revision to compare against")
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--block", type=int, default=1000, help="steps per block")
    parser.add_argument("--run", type=int, default=0, help="also N-step runs, every=100")
    args = parser.parse_args()
    sys.path.insert(0, str(_extract(args.base)))
    import pvw_base.runs.watch as base_watch  # type: ignore[import-not-found]
    import pvw_base.tracer.capture.session as base_session  # type: ignore[import-not-found]

    calls: dict[str, list[int]] = {"this tree": [], args.base: []}
    ratios: dict[str, list[tuple[float, float]]] = {"this tree": [], args.base: []}
    runs: dict[str, list[tuple[float, float]]] = {"this tree": [], args.base: []}
    own = _entries(this_watch.RunWatch, this_session.TraceSession)
    versions = {
        "this tree": _entries(this_watch.RunWatch, this_session.TraceSession,
                              calls["this tree"]),
        args.base: _entries(base_watch.RunWatch, base_session.TraceSession, calls[args.base]),
    }  # fmt: skip
    t = bw.Trainer(args.model)
    t.steps(5)
    try:  # this tree's compiled per-step code (the fast extra), compiled before any block
        from paddleviz_widget.runs.grad_kernel import kernel

        print(f"compiled per-step code: {'yes' if kernel() is not None else 'no (NumPy)'}")
    except ImportError:
        pass
    plain = (1.0, 1.0)
    for rep in range(args.reps):
        names = list(versions) if rep % 2 == 0 else list(reversed(versions))
        for name in names:
            plain = t.steps(args.block)
            _swap(versions[name])
            try:
                watched = t.watched(args.block, 10**9, skip_first=True)
                if args.run:
                    plain_run = t.steps(args.run)
                    whole = t.watched(args.run, 100, skip_first=False)
                    runs[name].append((whole[0] / plain_run[0], whole[1] / plain_run[1]))
            finally:
                _swap(own)
            ratios[name].append((watched[0] / plain[0], watched[1] / plain[1]))
    step = f"{plain[0] / args.block * 1e3:.2f} ms wall, {plain[1] / args.block * 1e3:.2f} ms CPU"
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.model}: {args.reps} reps x {args.block} steps, plain step {step}, load {load}")
    for name, pairs in ratios.items():
        wall, cpu = median(p[0] for p in pairs), median(p[1] for p in pairs)
        each = " ".join(f"{p[1]:.3f}" for p in pairs)
        per_call = median(calls[name]) / 1e3 if calls[name] else float("nan")
        print(f"  {name:<10} summary/plain wall {wall:.3f}x, CPU {cpu:.3f}x (CPU each: {each}); "
              f"the step's record {per_call:.0f} us (this thread's CPU, median)")  # fmt: skip
        if runs[name]:
            wall, cpu = median(p[0] for p in runs[name]), median(p[1] for p in runs[name])
            print(f"  {'':<10} {args.run}-step run, every=100 / plain: wall {wall:.3f}x, "
                  f"CPU {cpu:.3f}x")  # fmt: skip


if __name__ == "__main__":
    main()
