"""The per-step summary's cost phase by phase (a script, not a test)

    python benchmarks/bench_watch_phases.py --models resnet50 --reps 4 --block 10

bench_watch.py's block ratios swing by several percent from block to block on this machine
(a whole block's time is one sample); here every step is timed by phase (forward, backward,
Adam step, clear_grad) in plain blocks and in watched blocks (trace(every=10**9): the
per-step summary only, inside loss.backward()), alternated, each block's first step (the
watched one's full capture) left out, and the medians of each phase compared: the summary
shows as the backward's difference, and the step's median ratio is the figure to hold
against the goal (<= 1.02x).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
import time

import common  # noqa: F401 (import path, quiet Paddle)
import numpy as np
import paddle
from bench_watch import BUILDERS

from paddleviz_widget import trace

PHASES = ("forward", "backward", "opt.step", "clear_grad")


def block(model, x, opt, n: int, watched: bool) -> np.ndarray:
    """n steps' phase times (seconds), after one untimed step."""
    times = []
    folder = tempfile.mkdtemp(prefix="bench-phases-")
    run = trace(model, stats=True, every=10**9, run_dir=f"{folder}/run")
    with run if watched else contextlib.nullcontext():
        for i in range(n + 1):
            t0 = time.perf_counter()
            loss = model(x).astype("float32").square().mean()
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
            opt.step()
            t3 = time.perf_counter()
            opt.clear_grad()
            t4 = time.perf_counter()
            if i:
                times.append((t1 - t0, t2 - t1, t3 - t2, t4 - t3))
    shutil.rmtree(folder, ignore_errors=True)
    return np.array(times)


def bench(name: str, reps: int, n: int) -> None:
    model, x = BUILDERS[name]()
    opt = paddle.optimizer.Adam(1e-4, parameters=model.parameters())
    block(model, x, opt, 2, False)  # warm up
    plain, watched = [], []
    for _ in range(reps):
        plain.append(block(model, x, opt, n, False))
        watched.append(block(model, x, opt, n, True))
    p, w = np.concatenate(plain), np.concatenate(watched)
    for k, phase in enumerate(PHASES):
        a, b = np.median(p[:, k]) * 1e3, np.median(w[:, k]) * 1e3
        print(f"{name:<10} {phase:<10} plain {a:8.2f} ms  watched {b:8.2f} ms  {b - a:+.2f} ms")
    a, b = np.median(p.sum(1)), np.median(w.sum(1))
    print(f"{name:<10} step       plain {a * 1e3:8.2f} ms  watched {b * 1e3:8.2f} ms  "
          f"{b / a:.3f}x ({len(p)} steps each)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="*", default=["resnet50"])
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--block", type=int, default=10, help="timed steps per block")
    args = parser.parse_args()
    for name in args.models:
        bench(name, args.reps, args.block)


if __name__ == "__main__":
    main()
