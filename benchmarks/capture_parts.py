"""Where one full capture step's time goes on a model (a script, not a test):

    PYTHONPATH=.. python capture_parts.py --model llama-10k --steps 4

Runs bench_watch's training step inside trace(stats=True, every=1) (two warm-up steps, then
--steps timed ones) with timing wrappers around the capture's parts, and prints each part's
share of the main thread's CPU time (time.thread_time) per captured step, the garbage
collector's time and collections, and a plain step after it. Parts nest (``watch _capture``
holds ``captured_graph`` and ``write_capture``; ``Paddle's backward`` holds the stats hooks'
calls, which hold ``_record``); the optimizer and the user's forward code are not wrapped.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import os
import time
from typing import Any

import bench_watch as bw

from paddleviz_widget.runs import log_writer, watch
from paddleviz_widget.tracer import build
from paddleviz_widget.tracer.capture import (
    backward_record,
    forward_finite,
    grad_stats,
    layer_scopes,
    scope_recording,
    session,
    stats_watch,
)  # fmt: skip

spent: collections.defaultdict[str, float] = collections.defaultdict(float)


def wrap(owner: Any, name: str, label: str) -> None:
    f = getattr(owner, name, None)
    if f is None:  # an older tree without this part
        return

    @functools.wraps(f)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return f(*args, **kwargs)
        finally:
            spent[label] += time.thread_time() - start

    setattr(owner, name, timed)


PARTS = [
    (grad_stats.StatsCapture, "_record", "hooks' bookkeeping (_record)"),
    (grad_stats.StatsCapture, "arm", "arm"),
    (grad_stats.StatsCapture, "disarm", "disarm"),
    (grad_stats.StatsCapture, "collect", "collect"),
    (stats_watch, "backward_stats", "backward_stats"),
    (scope_recording.Recording, "enter", "scope enter"),
    (scope_recording.Recording, "exit", "scope exit"),
    (scope_recording.Recording, "_retire", "scope _retire"),
    (scope_recording.Recording, "claim_pending", "scope claims (from the walk)"),
    (layer_scopes.LayerScopeRecorder, "snapshot", "scope snapshot"),
    (backward_record.BackwardRecord, "scan", "scan"),
    (build, "captured_graph", "captured_graph"),
    (watch.RunWatch, "_capture", "watch _capture"),
    (log_writer.RunLogWriter, "write_capture", "write_capture (JSON, gzip, write)"),
    (forward_finite.ForwardFiniteWatch, "_hook", "forward NaN/Inf check (post hooks)"),
    (forward_finite.ForwardFiniteWatch, "_enter", "forward NaN/Inf check (pre hooks)"),
    (forward_finite.ForwardFiniteWatch, "take", "forward NaN/Inf take"),
    (grad_stats.StatsCapture, "observe_outputs", "observe_outputs (the loss)"),
    (stats_watch.StatsHistory, "add", "StatsHistory.add"),
    (session.TraceSession, "_anchor", "session _anchor (claims + snapshot)"),
    (session.TraceSession, "_settle", "session _settle"),
]


def wrap_hooks() -> None:
    """The stats hooks' whole calls (``_record``, ``_receive``, the returned list), and
    Paddle's backward around them: the C++ -> Python calls are the difference."""
    make = grad_stats.StatsCapture._hook_for

    def hook_for(self: Any, ptr: int, edges: int) -> Any:
        hook = make(self, ptr, edges)

        def timed(grad_outputs: Any, grad_inputs: Any) -> Any:
            start = time.thread_time()
            try:
                return hook(grad_outputs, grad_inputs)
            finally:
                spent["stats hooks' calls (whole)"] += time.thread_time() - start

        return timed

    grad_stats.StatsCapture._hook_for = hook_for  # type: ignore[method-assign]
    run_with_stats = session.run_with_stats

    def with_timed_run(run: Any, *args: Any, **kwargs: Any) -> Any:
        def timed() -> Any:
            start = time.thread_time()
            try:
                return run()
            finally:
                spent["Paddle's backward (hooks' calls inside)"] += time.thread_time() - start

        start = time.thread_time()
        try:
            return run_with_stats(timed, *args, **kwargs)
        finally:
            spent["run_with_stats (backward inside)"] += time.thread_time() - start

    session.run_with_stats = with_timed_run  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="llama-10k")
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    for owner, name, label in PARTS:
        wrap(owner, name, label)
    wrap_hooks()
    gc_time, gc_start, gc_runs = [0.0], [0.0], collections.Counter[int]()

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_start[0] = time.thread_time()
            gc_runs[info["generation"]] += 1
        else:
            gc_time[0] += time.thread_time() - gc_start[0]

    t = bw.Trainer(args.model)
    t.steps(3)
    n = args.steps
    with bw.trace(t.model, stats=True, every=1, run_dir=t.run_dir()):
        t.step()
        t.step()
        spent.clear()
        gc.callbacks.append(on_gc)
        start = time.thread_time()
        for _ in range(n):
            t.step()
        captured = (time.thread_time() - start) / n
        gc.callbacks.remove(on_gc)
    start = time.thread_time()
    t.steps(n)
    plain = (time.thread_time() - start) / n
    backward = 0.0  # a plain step's own backward, next to the captured one's
    for _ in range(n):
        loss = t.model(t.x).astype("float32").square().mean()
        start = time.thread_time()
        loss.backward()
        backward += time.thread_time() - start
        t.opt.step()
        t.opt.clear_grad()
    print(f"{args.model}: captured step {captured * 1e3:.0f} ms, plain step {plain * 1e3:.0f} ms "
          f"(main thread CPU), {captured / plain:.2f}x; load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for label, took in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {label:<36} {took / n * 1e3:7.1f} ms")
    print(f"  {'a plain step: Paddle backward':<36} {backward / n * 1e3:7.1f} ms")
    print(f"  {'garbage collector':<36} {gc_time[0] / n * 1e3:7.1f} ms "
          f"(collections by generation over {n} steps: {dict(gc_runs)})")  # fmt: skip


if __name__ == "__main__":
    main()
