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
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

import common  # noqa: F401 (import path, quiet Paddle)
import paddle
import paddle.nn.functional as F
from models import MODELS

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
        self.tmp = Path(tempfile.mkdtemp(prefix="bench-watch-"))
        self.runs = 0

    def step(self) -> None:
        loss = self.model(self.x).astype("float32").square().mean()
        loss.backward()
        self.opt.step()
        self.opt.clear_grad()

    def steps(self, n: int) -> float:
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            self.step()
        self.cpu = time.process_time() - cpu  # the process's CPU time of the same steps
        return time.perf_counter() - start

    def run_dir(self) -> Path:
        self.runs += 1
        path = self.tmp / f"run{self.runs}"
        shutil.rmtree(path, ignore_errors=True)
        return path

    def watched(self, n: int, every: int, skip_first: bool) -> float:
        """Seconds for n watched steps; skip_first: step 0 (a full capture) untimed."""
        path = self.run_dir()
        start, cpu = time.perf_counter(), time.process_time()
        with trace(self.model, stats=True, every=every, run_dir=path):
            if skip_first:
                self.step()
                start, cpu = time.perf_counter(), time.process_time()
            for _ in range(n):
                self.step()
            took, self.cpu = time.perf_counter() - start, time.process_time() - cpu
        if not skip_first:
            took, self.cpu = time.perf_counter() - start, time.process_time() - cpu
        shutil.rmtree(path, ignore_errors=True)
        return took


def bench(name: str, reps: int, block: int, run: int) -> None:
    t = Trainer(name)
    t.steps(3)  # warm up
    summary, capture, summary_cpu, capture_cpu, plain_cpu = [], [], [], [], []
    for _ in range(reps):
        plain = t.steps(block)
        plain_cpu.append(t.cpu / block)
        watched = t.watched(block, 10**9, skip_first=True)
        summary.append(watched / plain)
        summary_cpu.append(t.cpu / block / plain_cpu[-1])
        ones = [(t.steps(1), t.cpu) for _ in range(3)]
        plain1, plain1_cpu = median(w for w, _ in ones), median(c for _, c in ones)
        captured = t.watched(2, 1, skip_first=True) / 2
        capture.append(captured / plain1)
        capture_cpu.append(t.cpu / 2 / plain1_cpu)
    s, c = median(summary), median(capture)
    load = os.getloadavg()[0]
    print(f"{name:<10} summary/plain {s:.3f}x (CPU {median(summary_cpu):.3f}x)  capture step/plain "
          f"step {c:.2f}x (CPU {median(capture_cpu):.2f}x)  (plain step {plain / block * 1e3:.1f} "
          f"ms, CPU {median(plain_cpu) * 1e3:.1f} ms; load {load:.1f})")  # fmt: skip
    if run:
        if name == "mlp":
            ratios = []
            for _ in range(reps):
                plain = t.steps(run)
                ratios.append(t.watched(run, 100, skip_first=False) / plain)
            print(f"{'':<10} {run}-step run, every=100 / plain: {median(ratios):.3f}x (measured)")
        else:
            captures = run // 100
            projected = ((run - captures) * s + captures * c) / run
            print(f"{'':<10} {run}-step run, every=100 / plain: {projected:.3f}x (projected)")


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
    args = parser.parse_args()
    for name in args.models:
        bench(name, args.reps, args.block, args.run)
    if args.memory:
        memory(args.memory)


if __name__ == "__main__":
    main()
