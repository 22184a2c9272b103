"""GraphWidget(y) of this tree against another tree's, interleaved in one process (a script).

    python benchmarks/widget_ab.py /tmp/base [--model llama-100k] [--reps 4]

As build_ab.py (whose ``import_base`` it uses: the other tree's package as ``pvbase``, sharing
this tree's ``tracer/capture``, so one traced backward serves both; the record's kept walk is
then this tree's for both), after one traced backward: ``GraphWidget(y)`` of each tree in
turn, the order swapped each round, every widget kept alive (as a notebook keeps earlier
cells' widgets: the first widget of a process apart from later ones). Prints wall, process CPU
(the deflating threads included) and the main thread's CPU of each, medians per tree, and the
garbage collections during each constructor. No kernel: ipywidgets serialises the graph for
the page all the same (wire.py's pieces, deflated); what a kernel adds (the comm's send on its
iopub thread) is not here.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path
from typing import Any

from build_ab import import_base
from models import HUGE, MODELS

import paddleviz_widget
from paddleviz_widget import trace


def _collections() -> list[tuple[int, float, float]]:
    """(generation, when it started, seconds) of each collection from now on."""
    out: list[tuple[int, float, float]] = []
    start: list[float] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            start.append(time.perf_counter())
        elif start:
            began = start.pop()
            out.append((info["generation"], began, time.perf_counter() - began))

    gc.callbacks.append(callback)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="the other tree (git archive ... | tar -x)")
    parser.add_argument("--model", default="llama-100k", choices=[*MODELS, *HUGE])
    parser.add_argument("--reps", type=int, default=4)
    args = parser.parse_args()
    base = import_base(args.base)
    trees: dict[str, Any] = {"before": base, "after": paddleviz_widget}
    model, x = {**MODELS, **HUGE}[args.model]()
    with trace(model):
        y = model(x)
        y.sum().backward()
    sent: list[float] = []  # when each tree's widget last sent its state (the graph's message)
    for t in trees.values():
        cls = t.GraphWidget

        def send_state(self: Any, key: Any = None, _send: Any = cls.send_state) -> None:
            _send(self, key)
            sent.append(time.perf_counter())

        cls.send_state = send_state
    held: list[Any] = []
    runs: dict[str, list[tuple[float, ...]]] = {k: [] for k in trees}
    pauses = _collections()
    for rep in range(args.reps):
        for k in list(trees) if rep % 2 == 0 else list(reversed(trees)):
            pauses.clear()
            sent.clear()
            wall, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
            held.append(trees[k].GraphWidget(y))
            took = (
                time.perf_counter() - wall,
                time.process_time() - cpu,
                time.thread_time() - thread,
                sent[-1] - wall,  # the graph's message
            )
            runs[k].append(took)
            gcs = (
                ", ".join(
                    f"gen{g} {s * 1e3:.0f} ms at +{(at - wall) * 1e3:.0f}"
                    for g, at, s in pauses
                    if s > 1e-3
                )
                or "none"
            )
            load = Path("/proc/loadavg").read_text()[:14]
            print(f"  {k:6} widget {len(held)}: wall {took[0]:.3f} s, process CPU {took[1]:.3f} s, "
                  f"thread CPU {took[2]:.3f} s, graph sent at {took[3]:.3f} s; collections: {gcs} "
                  f"(load {load})")  # fmt: skip
    print(f"{args.model}, {args.reps} widgets a tree, medians (s): wall / process CPU / thread CPU"
          " / graph sent (wall)")  # fmt: skip
    for k, rows in runs.items():
        w, c, t, at = (statistics.median(col) for col in zip(*rows))
        print(f"  {k:6} {w:.3f} / {c:.3f} / {t:.3f} / {at:.3f}")


if __name__ == "__main__":
    main()
