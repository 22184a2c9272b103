"""What watching a training run costs: trace(model, stats=True, every=N, run_dir=...)
(a script, not a test)

    python benchmarks/bench_watch.py                       # mlp, resnet50, llama-10k
    python benchmarks/bench_watch.py --models mlp --run 1000 --memory 5000

A step is a real training step: forward, loss, backward, Adam step, clear_grad. Blocks
alternate in one process (plain, watched, plain, watched, ...) so that load from other
processes hits both; figures are medians over the repetitions.

- summary: a block of --block steps inside trace(every=10**9) after its step 0 (the full
  capture, untimed): the per-step summary alone. Goal <= 1.02x plain.
- capture: one fully captured step (trace(every=1), steps after the first) against a plain
  step. Goal on llama-10k <= 3x.
Each ratio is given in wall-clock time and in the process's CPU time (less sensitive to other
processes on a shared machine), with the load average at the end.
- run: --run steps with every=100 inside one trace() (entry, exit, captures and all) against
  --run plain steps (mlp; the slow models project it from the two figures above:
  ((run - run/100) * summary + run/100 * capture) / run). Goal <= 1.05x.
- memory: RSS growth over --memory watched steps of the MLP, after the first 100. < 50 MB.
- parts (--parts STEPS): the per-step work after backward, per call (medians), in wall
  time and in the calling thread's CPU time (less affected by load; process CPU time would
  count the BLAS threads Paddle's ops leave spinning): GradSummary.read_step, the gradients
  and the loss (its helper thread, for big models, is in wall only), the anomaly rules, the
  step's tail line and Parquet part (write_step).

Ratios are given twice: wall time and process CPU time (time.process_time, all threads),
with the load average at the end of each model.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

import common  # noqa: F401 (import path, quiet Paddle)
import paddle
import paddle.nn.functional as F
from models import MODELS
from scratch import scratch_dir

from paddleviz_widget import trace


class MLP(paddle.nn.Layer):
    def __init__(self, width: int = 256, depth: int = 4) -> None:
        super().__init__()
        sizes = [64] + [width] * depth
        self.layers = paddle.nn.LayerList(
            [paddle.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]
        )
        self.head = paddle.nn.Linear(width, 10)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for layer in self.layers:
            x = F.relu(layer(x))
        return self.head(x)


def mlp() -> tuple[paddle.nn.Layer, paddle.Tensor]:
    paddle.seed(0)
    return MLP(), paddle.randn([32, 64])


BUILDERS: dict[str, Callable[[], tuple[paddle.nn.Layer, paddle.Tensor]]] = {
    "mlp": mlp, **MODELS,
}  # fmt: skip


class Trainer:
    def __init__(self, name: str) -> None:
        self.model, self.x = BUILDERS[name]()
        self.opt = paddle.optimizer.Adam(1e-4, parameters=self.model.parameters())
        self.tmp = scratch_dir("bench-watch-")
        self.runs = 0

    def step(self) -> None:
        loss = self.model(self.x).astype("float32").square().mean()
        loss.backward()
        self.opt.step()
        self.opt.clear_grad()

    def steps(self, n: int) -> tuple[float, float]:
        """(wall, process CPU) seconds of n plain steps."""
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            self.step()
        return time.perf_counter() - start, time.process_time() - cpu

    def run_dir(self) -> Path:
        self.runs += 1
        path = self.tmp / f"run{self.runs}"
        shutil.rmtree(path, ignore_errors=True)
        return path

    def watched(self, n: int, every: int, skip_first: bool) -> tuple[float, float]:
        """(wall, process CPU) seconds of n watched steps; skip_first: step 0 (a full
        capture) untimed."""
        path = self.run_dir()
        start, cpu = time.perf_counter(), time.process_time()
        with trace(self.model, stats=True, every=every, run_dir=path):
            if skip_first:
                self.step()
                start, cpu = time.perf_counter(), time.process_time()
            for _ in range(n):
                self.step()
            took = time.perf_counter() - start, time.process_time() - cpu
        if not skip_first:
            took = time.perf_counter() - start, time.process_time() - cpu
        shutil.rmtree(path, ignore_errors=True)
        return took


def _ratios(pairs: list[tuple[tuple[float, float], tuple[float, float]]]) -> str:
    """'wall W x, CPU C x': medians of watched / plain over (watched, plain) pairs."""
    wall = median(w[0] / p[0] for w, p in pairs)
    cpu = median(w[1] / p[1] for w, p in pairs)
    return f"wall {wall:.3f}x, CPU {cpu:.3f}x"


def bench(name: str, reps: int, block: int, run: int) -> None:
    t = Trainer(name)
    t.steps(3)  # warm up
    summary, capture = [], []
    for _ in range(reps):
        plain = t.steps(block)
        summary.append((t.watched(block, 10**9, skip_first=True), plain))
        ones = [t.steps(1) for _ in range(3)]
        plain1 = (median(o[0] for o in ones), median(o[1] for o in ones))
        captured = t.watched(2, 1, skip_first=True)
        capture.append(((captured[0] / 2, captured[1] / 2), plain1))
    print(f"{name:<10} summary/plain {_ratios(summary)}; capture step/plain step "
          f"{_ratios(capture)} (plain step {plain[0] / block * 1e3:.1f} ms wall, "
          f"{plain[1] / block * 1e3:.1f} ms CPU)")  # fmt: skip
    if run:
        if name == "mlp":
            pairs = []
            for _ in range(reps):
                plain = t.steps(run)
                pairs.append((t.watched(run, 100, skip_first=False), plain))
            print(f"{'':<10} {run}-step run, every=100 / plain: {_ratios(pairs)} (measured)")
        else:
            captures = run // 100
            for k, what in enumerate(("wall", "CPU")):
                s = median(w[k] / p[k] for w, p in summary)
                c = median(w[k] / p[k] for w, p in capture)
                projected = ((run - captures) * s + captures * c) / run
                print(f"{'':<10} {run}-step run, every=100 / plain: {what} {projected:.3f}x "
                      "(projected)")  # fmt: skip
    print(f"{'':<10} load average {_load()}")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def parts(name: str, steps: int) -> None:
    """Per-call process CPU time of each part of the per-step work, in a watched run."""
    from paddleviz_widget.runs import anomalies, log_writer, summary, watch

    spent: dict[str, list[tuple[float, float]]] = {}

    def timing(owner: object, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def timed(*args: object, **kwargs: object) -> object:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                took = (time.perf_counter() - start, time.thread_time() - cpu)
                spent.setdefault(label, []).append(took)

        setattr(owner, attr, timed)

    timing(summary.GradSummary, "read_step", "read_step (+ loss)")
    timing(anomalies.AnomalyFinder, "check", "anomaly rules")
    timing(log_writer.RunLogWriter, "write_step", "tail line + part")
    timing(watch.RunWatch, "after_backward", "all after backward")
    t = Trainer(name)
    t.steps(3)
    plain = t.steps(steps)
    spent.clear()
    t.watched(steps, 10**9, skip_first=True)
    each = f"{plain[0] / steps * 1e3:.3f} ms wall, {plain[1] / steps * 1e3:.3f} ms process CPU"
    print(f"{name:<10} per-step work after backward, per call ({steps} steps; plain step "
          f"{each}):")  # fmt: skip
    for label, times in spent.items():
        times = times[1:]  # step 0's (the full capture) left out
        if not times:  # a clean step settled in one compiled call skips this part
            print(f"{'':<12}{label:<22} not called on clean steps")
            continue
        wall = median(t[0] for t in times) * 1e6
        cpu = median(t[1] for t in times) * 1e6
        print(
            f"{'':<12}{label:<22} wall {wall:9.1f} us   this thread's CPU {cpu:9.1f} us (medians)"
        )
    print(f"{'':<10} load average {_load()}")


def memory(steps: int) -> None:
    import psutil

    t = Trainer("mlp")
    path = t.run_dir()
    process = psutil.Process()
    with trace(t.model, stats=True, every=100, run_dir=path):
        for step in range(steps):
            t.step()
            if step == 99:
                at100 = process.memory_info().rss
    end = process.memory_info().rss
    mb = 2**20
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    print(f"mlp memory: {steps} watched steps (every=100): RSS {at100 / mb:.0f} MB at step 100, "
          f"{end / mb:.0f} MB at the end: +{(end - at100) / mb:.1f} MB (goal < 50 MB); run log "
          f"{size / mb:.1f} MB")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=["mlp", "resnet50", "llama-10k"])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--block", type=int, default=50, help="steps per summary block")
    parser.add_argument("--run", type=int, default=1000)
    parser.add_argument("--memory", type=int, default=0)
    parser.add_argument("--parts", type=int, default=0, help="steps timed per part (0: none)")
    parser.add_argument("--no-ratios", action="store_true", help="only --parts / --memory")
    args = parser.parse_args()
    for name in args.models:
        if not args.no_ratios:
            bench(name, args.reps, args.block, args.run)
        if args.parts:
            parts(name, args.parts)
    if args.memory:
        memory(args.memory)


if __name__ == "__main__":
    main()
