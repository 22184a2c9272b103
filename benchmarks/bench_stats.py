"""What ``trace(stats=True)`` costs, and what ``steps=K`` keeps  (a script, not a test)

    python benchmarks/bench_stats.py                  # ResNet-50 and llama-10k, 5 reps
    python benchmarks/bench_stats.py --memory 500     # + RSS over 500 ResNet-18 steps, steps=50

Per model, three steps alternate in one loop (so that load from other processes hits all of
them): a plain forward+backward, the same inside trace(model), and inside
trace(model, stats=True); medians in ms and the ratios to plain. Goal: stats on ResNet-50
<= 1.5x plain. The memory run trains ResNet-18 (64x64, batch 8) inside one
trace(model, stats=True, steps=50) and prints RSS growth from step 50 to the end.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from statistics import median

import paddle
from common import ms, ratio
from models import MODELS

from paddleviz_widget import trace

GOAL_STATS_RATIO = 1.5


def _step(model, x, **options) -> float:
    start = time.perf_counter()
    if options.get("plain"):
        model(x).sum().backward()
    else:
        with trace(model, **options):
            model(x).sum().backward()
    model.clear_gradients()
    return time.perf_counter() - start


def bench(name: str, reps: int) -> dict[str, float]:
    model, x = MODELS[name]()
    runs: dict[str, list[float]] = defaultdict(list)
    for rep in range(reps + 1):  # rep 0 warms every path up
        for key, options in (("plain", {"plain": True}), ("trace", {}), ("stats", {"stats": True})):
            t = _step(model, x, **options)
            if rep:
                runs[key].append(t)
    return {key: median(values) for key, values in runs.items()}


def memory(steps: int) -> None:
    import psutil

    model = paddle.vision.models.resnet18(num_classes=10)
    opt = paddle.optimizer.Momentum(0.01, parameters=model.parameters())
    x = paddle.randn([8, 3, 64, 64])
    rss = psutil.Process().memory_info().rss
    at50 = rss
    with trace(model, stats=True, steps=50) as session:
        for step in range(steps):
            model(x).mean().backward()
            opt.step()
            opt.clear_grad()
            if step == 49:
                at50 = psutil.Process().memory_info().rss
    end = psutil.Process().memory_info().rss
    mb = 2**20
    print(f"\nResNet-18, {steps} steps in trace(stats=True, steps=50): kept "
          f"{len(session.history)} steps; RSS {rss / mb:.0f} MB at start, {at50 / mb:.0f} MB "
          f"at step 50, {end / mb:.0f} MB at the end: +{(end - at50) / mb:.1f} MB "
          "(goal < 50 MB)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--models", nargs="*", default=["resnet50", "llama-10k"])
    parser.add_argument("--memory", type=int, default=0, help="training steps for the RSS run")
    args = parser.parse_args()
    print(f"{'model':<12}{'plain ms':>10}{'trace ms':>10}{'stats ms':>10}"
          f"{'trace/plain':>13}{'stats/plain':>13}{'stats/trace':>13}")  # fmt: skip
    for name in args.models:
        r = bench(name, args.reps)
        print(f"{name:<12}{ms(r['plain']):>10}{ms(r['trace']):>10}{ms(r['stats']):>10}"
              f"{ratio(r['trace'], r['plain']):>13}{ratio(r['stats'], r['plain']):>13}"
              f"{ratio(r['stats'], r['trace']):>13}")  # fmt: skip
        if name == "resnet50":
            ok = r["stats"] / r["plain"] <= GOAL_STATS_RATIO
            print(f"  goal stats <= {GOAL_STATS_RATIO}x plain: {'met' if ok else 'NOT met'}")
    if args.memory:
        memory(args.memory)


if __name__ == "__main__":
    main()
