"""What the per-layer NaN/Inf check of ``trace(model, stats=True)`` costs in the forward
(a script, not a test)

    python benchmarks/bench_forward_check.py --reps 9 --models resnet50 llama-10k

Per model, two forwards alternate in one loop (so that load from other processes hits both):
plain, and with tracer/capture/forward_finite.py's hooks on every sublayer (one finiteness
check per layer output, read in place on the CPU); medians in ms and their ratio.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from statistics import median

import paddle
from common import ms, ratio
from models import MODELS

from paddleviz_widget.tracer.capture.forward_finite import ForwardFiniteWatch


def _forward(model, x, watch) -> float:
    if watch is not None:
        watch.start()
    try:
        start = time.perf_counter()
        with paddle.no_grad():
            model(x)
        took = time.perf_counter() - start
    finally:
        if watch is not None:
            watch.stop()
            watch.take()
    return took


def bench(name: str, reps: int) -> dict[str, float]:
    model, x = MODELS[name]()
    watch = ForwardFiniteWatch(model)
    runs: dict[str, list[float]] = defaultdict(list)
    for rep in range(reps + 1):  # rep 0 warms both paths up
        for key, w in (("plain", None), ("checked", watch)):
            t = _forward(model, x, w)
            if rep:
                runs[key].append(t)
    return {key: median(values) for key, values in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--models", nargs="+", default=["resnet50", "llama-10k"])
    args = parser.parse_args()
    print("| model | layers | plain forward ms | checked ms | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for name in args.models:
        t = bench(name, args.reps)
        layers = sum(1 for _ in MODELS[name]()[0].sublayers(include_self=True))
        print(f"| {name} | {layers} | {ms(t['plain'])} | {ms(t['checked'])} | "
              f"{ratio(t['checked'], t['plain'])} |")  # fmt: skip


if __name__ == "__main__":
    main()
