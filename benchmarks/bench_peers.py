"""build_graph against torchviz and Paddle's own backward-graph dump.  (a script, not a test)

    python benchmarks/bench_peers.py                 # lenet, resnet50, the three Llamas
    python benchmarks/bench_peers.py --quick         # 3 reps, lenet/resnet50/llama-2.5k

Per model, all in one process and one run:
  ours       build_graph(model(x)): graph data for the widget (which lays it out in the
             browser), annotated by one replayed backward under VLOG 6 (the default path)
  ours->svg  make_graph(model(x)).source (the paddleviz-compatible Digraph) + `dot -Tsvg`
  torchviz   make_dot(y, params=dict(model.named_parameters())).source on the PyTorch twin
             (torch_models.py), then `dot -Tsvg`
  ours freed build_graph(y) after a plain backward: no replay possible, no edge shapes
  paddle     extra time of y.sum().backward(dump_backward_graph_path=DIR) over a plain
             backward (median of paired differences, floored at 0.1 ms: it is within the noise
             on ResNet-50), then `dot -Tsvg` on the .dot it wrote
`dot -Tsvg` gets --dot-timeout seconds (default 300) and is reported "timed out" past that.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import paddle
import torch
import torch_models
from common import median_time, ms, print_table, ratio, timed
from models import MODELS
from torchviz import make_dot

from paddleviz_widget import build_graph, make_graph
from paddleviz_widget.tracer.parse.paddle_dump import parse_backward_dot

PEER_MODELS = ["lenet", "resnet50", "llama-2.5k", "llama-6k", "llama-10k"]
QUICK_MODELS = ["lenet", "resnet50", "llama-2.5k"]
TIMED_OUT = "timed out"


def dot_svg(source: str, timeout: float, reps: int) -> float | str:
    """Median seconds of `dot -Tsvg` on ``source``, or "timed out" / "failed"."""
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.dot"
        path.write_text(source)
        for _ in range(reps):
            start = time.perf_counter()
            try:
                proc = subprocess.run(
                    ["dot", "-Tsvg", "-o", str(Path(tmp) / "graph.svg"), str(path)],
                    capture_output=True,
                    timeout=timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return TIMED_OUT
            if proc.returncode:
                return f"failed ({proc.stderr.decode(errors='replace').strip()[:80]})"
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def paddle_side(name: str, reps: int, timeout: float) -> dict[str, Any]:
    model, x = MODELS[name]()
    model(x).sum().backward()  # warm-up
    y = model(x)
    out: dict[str, Any] = {"nodes": len(build_graph(y)["nodes"])}
    out["dot_reps"] = dot_reps = reps if out["nodes"] < 1000 else 1
    out["build"] = median_time(lambda: build_graph(y), reps)
    out["make_graph"] = median_time(lambda: make_graph(y).source, reps)
    out["ours_dot"] = dot_svg(make_graph(y).source, timeout, dot_reps)

    extra, dump_text = [], ""
    for _ in range(reps):  # paired: each dumped backward against the plain one just before it
        model.clear_gradients()
        plain = timed(model(x).sum().backward)[0]
        model.clear_gradients()
        loss = model(x).sum()
        with tempfile.TemporaryDirectory() as tmp:
            dump = lambda loss=loss, tmp=tmp: loss.backward(dump_backward_graph_path=tmp)  # noqa: E731
            extra.append(timed(dump)[0] - plain)
            dump_text = next(Path(tmp).glob("*_backward_graph.dot")).read_text()
    # Below the noise of the backward itself (ResNet-50's convolutions) the difference can be <= 0.
    out["dump_extra"] = max(statistics.median(extra), 1e-4)
    out["dump_nodes"] = len(parse_backward_dot(dump_text).nodes)
    out["paddle_dot"] = dot_svg(dump_text, timeout, dot_reps)
    freed = model(x)
    freed.sum().backward()
    out["freed"] = median_time(lambda: build_graph(freed), reps)
    return out


def torch_side(name: str, reps: int, dot_reps: int, timeout: float) -> dict[str, Any]:
    model, x = torch_models.MODELS[name]()
    model(x).sum().backward()  # warm-up
    y = model(x)
    params = dict(model.named_parameters())
    _ = make_dot(y, params=params).source  # warm-up
    out: dict[str, Any] = {"nodes": torch_models.count_autograd_nodes(y)}
    out["make_dot"] = median_time(lambda: make_dot(y, params=params).source, reps)
    out["torch_dot"] = dot_svg(make_dot(y, params=params).source, timeout, dot_reps)
    return out


def plus(a: float, b: float | str) -> float | None:
    return a + b if isinstance(b, float) else None


def cell(value: float | str) -> str:
    return ms(value) if isinstance(value, float) else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 reps, skip llama-6k/10k")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per median")
    parser.add_argument("--models", nargs="*", default=None, choices=PEER_MODELS)
    parser.add_argument("--dot-timeout", type=float, default=300.0, help="seconds per dot run")
    args = parser.parse_args()
    reps = args.reps or (3 if args.quick else 5)
    names = args.models or (QUICK_MODELS if args.quick else PEER_MODELS)
    print(
        f"paddle {paddle.__version__}, torch {torch.__version__}, {reps} reps per median "
        f"(dot -Tsvg: median of {reps} below 1000 nodes, else 1 run), times in ms\n"
    )
    results = []
    for name in names:
        pd = paddle_side(name, reps, args.dot_timeout)
        th = torch_side(name, reps, pd["dot_reps"], args.dot_timeout)
        results.append((name, pd, th))
        print(f"  done {name}", flush=True)

    print("\nGraph extraction (no layout); peer/ours = peer time / ours build (< 1: peer faster)")
    headers = ["model", "nodes ours/dump/torch", "ours build", "ours freed", "torchviz make_dot"]
    headers += ["peer/ours", "paddle dump extra", "peer/ours"]
    rows = [
        [
            name,
            f"{pd['nodes']}/{pd['dump_nodes']}/{th['nodes']}",
            ms(pd["build"]),
            ms(pd["freed"]),
            ms(th["make_dot"]),
            ratio(th["make_dot"], pd["build"]),
            ms(pd["dump_extra"]),
            ratio(pd["dump_extra"], pd["build"]),
        ]
        for name, pd, th in results
    ]
    print_table(headers, rows)

    print("\nTo an SVG (extraction + `dot -Tsvg`); x/ours = that time / ours build_graph")
    headers = ["model", "ours make_graph+dot", "x/ours", "torchviz+dot", "x/ours"]
    headers += ["paddle dump+dot", "x/ours", "dot on ours/torch/paddle"]
    rows = []
    for name, pd, th in results:
        ours = plus(pd["make_graph"], pd["ours_dot"])
        torch_total = plus(th["make_dot"], th["torch_dot"])
        paddle_total = plus(pd["dump_extra"], pd["paddle_dot"])
        rows.append(
            [
                name,
                cell(ours if ours is not None else pd["ours_dot"]),
                ratio(ours, pd["build"]),
                cell(torch_total if torch_total is not None else th["torch_dot"]),
                ratio(torch_total, pd["build"]),
                cell(paddle_total if paddle_total is not None else pd["paddle_dot"]),
                ratio(paddle_total, pd["build"]),
                " / ".join(cell(v) for v in (pd["ours_dot"], th["torch_dot"], pd["paddle_dot"])),
            ]
        )
    print_table(headers, rows)


if __name__ == "__main__":
    main()
