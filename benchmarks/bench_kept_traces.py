"""What finished traces cost while the user holds a tensor of each (issue 19): ResNet-18 at
64x64, batch 8, one training step per ``with trace(model):``, the step's output kept in a list
(``--hold``) or dropped. Prints the RSS after each trace and how many finished sessions
build_graph still looks in; the bound is kept_traces.MAX_SESSIONS.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_kept_traces.py --traces 12
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(traces: int, hold: bool) -> None:
    import paddle
    from paddle.vision.models import resnet18

    from paddleviz_widget import build_graph, trace
    from paddleviz_widget.tracer.capture.session import RECENT_SESSIONS

    paddle.seed(0)
    held, rows = [], []
    for k in range(traces):
        model = resnet18(num_classes=10)
        opt = paddle.optimizer.SGD(parameters=model.parameters())
        with trace(model):
            y = model(paddle.randn([8, 3, 64, 64]))
            y.mean().backward()
            opt.step()
            opt.clear_grad()
        if hold:
            held.append(y)
        del model, opt, y
        gc.collect()
        rows.append((k + 1, rss_mb(), len(list(RECENT_SESSIONS.newest_first()))))
    lost = "trace_lost" in build_graph(held[0])["meta"] if hold else None
    for k, rss, kept in rows:
        print(f"| {k} | {rss:.0f} | {kept} |")
    print(f"first graph says its trace was dropped: {lost}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=12)
    parser.add_argument("--child", choices=["hold", "drop"])
    args = parser.parse_args()
    if args.child:
        child(args.traces, args.child == "hold")
        return
    for mode in ("drop", "hold"):
        print(f"\n{mode}: traces | RSS MB | finished sessions kept (machine loaded)")
        out = subprocess.run(
            [sys.executable, __file__, "--traces", str(args.traces), "--child", mode],
            capture_output=True, text=True, check=True, env={**os.environ, "GLOG_minloglevel": "2"},
        )  # fmt: skip
        print(out.stdout.strip())


if __name__ == "__main__":
    main()
