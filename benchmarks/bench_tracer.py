"""How fast and how big is ``build_graph`` on real models?  (a script, not a test)

    python benchmarks/bench_tracer.py            # 7 repetitions, all models
    python benchmarks/bench_tracer.py --quick    # 3 repetitions, skips llama-6k

Prints one row per model (times are medians), then the goals, the trace() overhead on
ResNet-50 and the peak memory of build_graph on the ~10k-node graph (in a fresh process).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from typing import Any

import paddle
from common import json_bytes, median_time, ms, print_table, ratio, timed
from models import MODELS

import paddleviz_widget
from paddleviz_widget import build_graph

BIG = "llama-10k"
GOAL_BYTES_PER_NODE = 300
GOAL_BIG_BUILD_S = 0.5
GOAL_TRACE_RATIO = 1.3


def forward_backward(model: Any, x: paddle.Tensor) -> paddle.Tensor:
    y = model(x)
    y.sum().backward()
    return y


def bench_model(name: str, reps: int) -> dict[str, Any]:
    model, x = MODELS[name]()
    forward_backward(model, x)  # warm-up: first calls of each kernel are slow
    model.clear_gradients()

    def plain() -> None:
        forward_backward(model, x)
        model.clear_gradients()

    t_fb = median_time(plain, reps)
    y = model(x)  # the common use: GraphWidget(model(x)), no backward needed
    build_graph(y)
    t_build = median_time(lambda: build_graph(y), reps)
    t_build_nogc = median_time(lambda: build_graph(y), reps, gc_off=True)
    graph = build_graph(y)
    t_json = median_time(lambda: json.dumps(graph, separators=(",", ":")), reps)
    size = json_bytes(graph)
    n = len(graph["nodes"])
    return {
        "name": name,
        "nodes": n,
        "edges": len(graph["edges"]),
        "fb": t_fb,
        "build": t_build,
        "build_nogc": t_build_nogc,
        "json": t_json,
        "bytes": size,
        "bytes_per_node": size / n,
    }


def bench_trace(reps: int) -> dict[str, Any] | str:
    """ResNet-50: (forward+backward under trace() + build_graph + JSON) / plain forward+backward.

    Plain and traced runs alternate so that load from other processes hits both alike.
    """
    trace = getattr(paddleviz_widget, "trace", None)
    if trace is None:
        return "n/a (trace() not available yet)"
    model, x = MODELS["resnet50"]()
    plain_fb, plain_b, traced_b, traced_total, traced_build = [], [], [], [], []
    graph: dict[str, Any] = {}
    try:
        for rep in range(reps + 1):  # rep 0 is a warm-up for both paths
            model.clear_gradients()
            t_f, y = timed(lambda: model(x))
            t_b, _ = timed(lambda y=y: y.sum().backward())
            model.clear_gradients()

            def traced() -> tuple[paddle.Tensor, float]:
                with trace(model):
                    y = model(x)
                    start = time.perf_counter()  # not timed(): its gc.collect() would count
                    y.sum().backward()
                    t_b = time.perf_counter() - start
                return y, t_b

            t_tfb, (y, t_tb) = timed(traced)
            t_build, graph = timed(lambda y=y: build_graph(y))
            t_json, _ = timed(lambda g=graph: json.dumps(g, separators=(",", ":")))
            if rep:
                plain_fb.append(t_f + t_b)
                plain_b.append(t_b)
                traced_b.append(t_tb)
                traced_build.append(t_build + t_json)
                traced_total.append(t_tfb + t_build + t_json)
    except Exception as exc:  # noqa: BLE001 - the API is in flux; report, don't crash the table
        return f"n/a (trace() raised {type(exc).__name__}: {exc})"
    med = statistics.median
    return {
        "plain_fb": med(plain_fb),
        "plain_b": med(plain_b),
        "traced_total": med(traced_total),
        "traced_b": med(traced_b),
        "traced_build_json": med(traced_build),
        "bytes_per_node": json_bytes(graph) / max(1, len(graph.get("nodes", []))),
        "annotated": sum(1 for n in graph.get("nodes", []) if n.get("group") or n.get("inputs")),
    }


def memory_child(name: str) -> None:
    """Runs in a fresh process: memory of one build_graph call on ``name``'s forward graph."""
    import psutil

    model, x = MODELS[name]()
    y = model(x)
    proc = psutil.Process()
    rss_before = proc.memory_info().rss
    graph = build_graph(y)
    rss_after = proc.memory_info().rss
    del graph
    tracemalloc.start()
    graph = build_graph(y)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        json.dumps(
            {
                "nodes": len(graph["nodes"]),
                "tracemalloc_peak": peak,
                "tracemalloc_retained": current,
                "rss_delta": rss_after - rss_before,
            }
        )
    )


def bench_memory(name: str) -> dict[str, Any] | str:
    proc = subprocess.run(
        [sys.executable, __file__, "--memory-child", name],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return f"n/a (child failed: {proc.stderr.strip().splitlines()[-1:]})"
    return json.loads(lines[-1])


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 reps, skip llama-6k")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per median")
    parser.add_argument("--models", nargs="*", default=None, choices=list(MODELS))
    parser.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return
    reps = args.reps or (3 if args.quick else 7)
    names = args.models or [n for n in MODELS if not (args.quick and n == "llama-6k")]
    print(f"paddle {paddle.__version__}, {reps} reps per median, times in ms\n")

    results = [bench_model(name, reps) for name in names]
    headers = ["model", "GradNodes", "edges", "fwd+bwd", "build_graph", "gc off", "us/node"]
    headers += ["build/fb", "json.dumps", "JSON bytes", "B/node"]
    rows = [
        [
            r["name"],
            str(r["nodes"]),
            str(r["edges"]),
            ms(r["fb"]),
            ms(r["build"]),
            ms(r["build_nogc"]),
            f"{r['build'] / r['nodes'] * 1e6:.1f}",
            ratio(r["build"], r["fb"]),
            ms(r["json"]),
            str(r["bytes"]),
            f"{r['bytes_per_node']:.0f}",
        ]
        for r in results
    ]
    print_table(headers, rows)

    print("\nGoals")
    worst = max(results, key=lambda r: r["bytes_per_node"])
    ok = worst["bytes_per_node"] <= GOAL_BYTES_PER_NODE
    print(
        f"  bytes per node (worst: {worst['name']}) {worst['bytes_per_node']:.0f} "
        f"[goal <= {GOAL_BYTES_PER_NODE}] {'met' if ok else 'NOT met'}"
    )
    big = next((r for r in results if r["name"] == BIG), None)
    if big:
        ok = big["build"] <= GOAL_BIG_BUILD_S
        print(
            f"  build_graph on {BIG} ({big['nodes']} nodes) {big['build']:.3f} s "
            f"[goal <= {GOAL_BIG_BUILD_S} s] {'met' if ok else 'NOT met'}"
        )
    trace = bench_trace(reps)
    if isinstance(trace, str):
        print(f"  trace+annotate+JSON / plain fwd+bwd on resnet50: {trace}")
    else:
        total = trace["traced_total"] / trace["plain_fb"]
        print(
            f"  trace+annotate+JSON / plain fwd+bwd on resnet50: {total:.2f}x "
            f"[goal <= {GOAL_TRACE_RATIO}x] {'met' if total <= GOAL_TRACE_RATIO else 'NOT met'}"
        )
        print(
            f"    plain fwd+bwd {ms(trace['plain_fb'])} ms, traced total "
            f"{ms(trace['traced_total'])} ms (of which build_graph+JSON "
            f"{ms(trace['traced_build_json'])} ms)"
        )
        print(
            f"    backward only: traced {ms(trace['traced_b'])} ms / plain "
            f"{ms(trace['plain_b'])} ms = {ratio(trace['traced_b'], trace['plain_b'])}"
        )
        print(
            f"    annotated graph: {trace['bytes_per_node']:.0f} B/node, "
            f"{trace['annotated']} nodes with a group or slots"
        )

    if BIG in names:
        mem = bench_memory(BIG)
        print(f"\nMemory of one build_graph on {BIG} (fresh process)")
        if isinstance(mem, str):
            print(f"  {mem}")
        else:
            for key, label in (
                ("tracemalloc_peak", "tracemalloc peak (Python heap during the call)"),
                ("tracemalloc_retained", "tracemalloc retained (the returned dict)"),
                ("rss_delta", "RSS delta (after - before, result alive)"),
            ):
                print(f"  {label:<48} {mib(mem[key])}")


if __name__ == "__main__":
    main()
