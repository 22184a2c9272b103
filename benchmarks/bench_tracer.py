"""How fast and how big is ``build_graph`` on real models?  (a script, not a test)

    python benchmarks/bench_tracer.py            # 5 repetitions, all models
    python benchmarks/bench_tracer.py --quick    # 3 repetitions, skips llama-6k

Three ways a graph gets built, each timed per model (medians, in ms):
  fresh   build_graph(model(x)): no backward yet, so the tracer replays one (paddle.grad
          under VLOG 6) to annotate the edges
  freed   build_graph(y) after a plain y.sum().backward(): no replay possible, structure and
          parameter names only
  trace   with trace(model): y = model(x); y.sum().backward()   then build_graph(y)
Then the goals, and the memory of build_graph on the ~10k-node graph (fresh child process).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
import tracemalloc
from collections import defaultdict
from statistics import median
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
FULL_DETAIL_MAX_NODES = 2000


def sources(graph: dict[str, Any]) -> str:
    return "+".join(graph["meta"].get("annotations", [])) or "-"


def bench_build(name: str, reps: int) -> dict[str, Any]:
    """Plain forward+backward, and build_graph on a fresh and on a freed graph."""
    model, x = MODELS[name]()
    model(x).sum().backward()  # warm-up: first calls of each kernel are slow
    model.clear_gradients()
    out: dict[str, Any] = {"name": name}

    def plain() -> None:
        model(x).sum().backward()
        model.clear_gradients()

    out["fb"] = median_time(plain, reps)
    fresh = model(x)
    out["fresh"] = median_time(lambda: build_graph(fresh), reps)
    graph = build_graph(fresh)
    out["nodes"], out["edges"] = len(graph["nodes"]), len(graph["edges"])
    out["fresh_bpn"] = json_bytes(graph) / out["nodes"]
    out["fresh_src"] = sources(graph)
    out["json"] = median_time(lambda: json.dumps(graph, separators=(",", ":")), reps)
    freed = model(x)
    freed.sum().backward()
    out["freed"] = median_time(lambda: build_graph(freed), reps)
    graph = build_graph(freed)
    out["freed_bpn"] = json_bytes(graph) / out["nodes"]
    return out


def _traced_step(trace: Any, model: Any, x: Any, **options: Any) -> tuple[float, float, Any]:
    """(forward+backward under trace(), its backward alone, the tensor traced)."""
    start = time.perf_counter()
    with trace(model, **options):
        y = model(x)
        loss = y.sum()
        started = time.perf_counter()
        loss.backward()
        t_b = time.perf_counter() - started
    return time.perf_counter() - start, t_b, y


def bench_trace(name: str, reps: int) -> dict[str, Any] | str:
    """(forward+backward under trace() + build_graph + JSON) against a plain forward+backward.

    Plain and traced steps alternate in one loop so that load from other processes hits both.
    A second loop does the same with ``trace(slots=True)`` (full detail), on graphs up to
    FULL_DETAIL_MAX_NODES: above that its ~0.5 ms per node would only say the obvious.
    """
    trace = getattr(paddleviz_widget, "trace", None)
    if trace is None:
        return "n/a (trace() not available yet)"
    model, x = MODELS[name]()
    runs: dict[str, list[float]] = defaultdict(list)
    graph: dict[str, Any] = {}
    default_graph: dict[str, Any] = {}
    modes: list[dict[str, Any]] = [{}]
    try:
        for options in modes:
            prefix = "full_" if options else ""
            for rep in range(reps + 1):  # rep 0 warms both paths up
                model.clear_gradients()
                t_f, y = timed(lambda: model(x))
                t_b, _ = timed(y.sum().backward)
                model.clear_gradients()
                t_tfb, t_tb, y = _traced_step(trace, model, x, **options)
                t_build, graph = timed(lambda y=y: build_graph(y))
                t_json, _ = timed(lambda g=graph: json.dumps(g, separators=(",", ":")))
                if rep:
                    for key, value in (
                        ("fb", t_f + t_b), ("b", t_b), ("tfb", t_tfb), ("tb", t_tb),
                        ("build", t_build + t_json), ("total", t_tfb + t_build + t_json),
                    ):  # fmt: skip
                        runs[prefix + key].append(value)
            if not options:
                default_graph = graph
                if len(graph["nodes"]) <= FULL_DETAIL_MAX_NODES:
                    modes.append({"slots": True})
    except Exception as exc:  # noqa: BLE001 - the API is in flux; report, don't crash the table
        return f"n/a (trace() raised {type(exc).__name__}: {exc})"
    out: dict[str, Any] = {key: median(values) for key, values in runs.items()}
    out["name"] = name
    out["bpn"] = json_bytes(default_graph) / len(default_graph["nodes"])
    out["src"] = sources(default_graph)
    out["full_src"] = sources(graph) if "full_total" in out else None
    return out


def memory_child(name: str, scenario: str) -> None:
    """In a fresh process: memory of one build_graph on ``name`` ("fresh" or "traced" graph)."""
    import psutil

    proc = psutil.Process()
    model, x = MODELS[name]()
    result = {}
    if scenario == "traced":
        tracemalloc.start()
        with paddleviz_widget.trace(model):
            y = model(x)
            y.sum().backward()
        result["session_kept"], result["session_peak"] = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    else:
        y = model(x)
    peak = [proc.memory_info().rss]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.002):
            peak[0] = max(peak[0], proc.memory_info().rss)

    before = peak[0]
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    graph = build_graph(y)
    done.set()
    sampler.join()
    result["rss_peak"] = max(peak[0], proc.memory_info().rss) - before
    result["rss_after"] = proc.memory_info().rss - before
    del graph
    tracemalloc.start()
    kept = build_graph(y)
    result["py_kept"], result["py_peak"] = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    print(json.dumps(result))


def bench_memory(name: str, scenario: str) -> dict[str, Any] | str:
    cmd = [sys.executable, __file__, "--memory-child", name, scenario]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return f"n/a (child failed: {proc.stderr.strip().splitlines()[-1:]})"
    return json.loads(lines[-1])


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def print_goals(builds: list[dict[str, Any]], traces: list[Any]) -> None:
    print("\nGoals")
    traced = [t for t in traces if isinstance(t, dict)]
    for label, key, rows in (
        ("fresh (replayed) graph", "fresh_bpn", builds),
        ("freed graph", "freed_bpn", builds),
        ("traced graph", "bpn", traced),
    ):
        if rows:
            worst = max(rows, key=lambda r: r[key])
            print(
                f"  bytes/node, {label}, worst {worst['name']}: {worst[key]:.0f} "
                f"[goal <= {GOAL_BYTES_PER_NODE}] {verdict(worst[key] <= GOAL_BYTES_PER_NODE)}"
            )
    big = next((r for r in builds if r["name"] == BIG), None)
    big_trace = next((t for t in traced if t["name"] == BIG), None)
    if big:
        for label, seconds in (
            ("fresh", big["fresh"]),
            ("freed", big["freed"]),
            ("after trace, incl. JSON", big_trace["build"] if big_trace else None),
        ):
            if seconds is not None:
                print(
                    f"  build_graph on {BIG} ({big['nodes']} nodes), {label}: {seconds:.2f} s "
                    f"[goal <= {GOAL_BIG_BUILD_S} s] {verdict(seconds <= GOAL_BIG_BUILD_S)}"
                )
    resnet = next((t for t in traces if isinstance(t, dict) and t["name"] == "resnet50"), None)
    if resnet is None:
        why = next((t for t in traces if isinstance(t, str)), "n/a (resnet50 not run)")
        print(f"  trace+annotate+JSON / plain fwd+bwd on resnet50: {why}")
    else:
        total = resnet["total"] / resnet["fb"]
        print(
            f"  trace+annotate+JSON / plain fwd+bwd on resnet50: {total:.2f}x "
            f"[goal <= {GOAL_TRACE_RATIO}x] {verdict(total <= GOAL_TRACE_RATIO)}; "
            f"backward only {ratio(resnet['tb'], resnet['b'])}; with trace(slots=True) "
            f"{ratio(resnet['full_total'], resnet['full_fb'])} (not the default)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 reps, skip llama-6k")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per median")
    parser.add_argument("--models", nargs="*", default=None, choices=list(MODELS))
    parser.add_argument("--memory-child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(*args.memory_child)
        return
    reps = args.reps or (3 if args.quick else 5)
    names = args.models or [n for n in MODELS if not (args.quick and n == "llama-6k")]
    print(f"paddle {paddle.__version__}, {reps} reps per median, times in ms\n")

    builds = [bench_build(name, reps) for name in names]  # before any trace(): see README
    headers = ["model", "GradNodes", "edges", "fwd+bwd", "fresh", "fresh/fb", "annotations"]
    headers += ["B/node", "json.dumps", "freed", "freed/fb", "B/node"]
    rows = [
        [r["name"], str(r["nodes"]), str(r["edges"]), ms(r["fb"]), ms(r["fresh"])]
        + [ratio(r["fresh"], r["fb"]), r["fresh_src"], f"{r['fresh_bpn']:.0f}", ms(r["json"])]
        + [ms(r["freed"]), ratio(r["freed"], r["fb"]), f"{r['freed_bpn']:.0f}"]
        for r in builds
    ]
    print("build_graph: fresh = before backward (replays it), freed = after a plain backward")
    print_table(headers, rows)

    traces = [bench_trace(name, reps) for name in names]
    print("\ntrace(model) around forward+backward, then build_graph + json.dumps")
    headers = ["model", "fwd+bwd", "traced fwd+bwd", "build+JSON", "total/fb"]
    headers += ["bwd", "traced bwd", "ratio", "annotations", "B/node", "slots=True total/fb"]
    rows = []
    for name, t in zip(names, traces):
        if isinstance(t, str):
            rows.append([name, t] + [""] * (len(headers) - 2))
            continue
        rows.append(
            [name, ms(t["fb"]), ms(t["tfb"]), ms(t["build"]), ratio(t["total"], t["fb"])]
            + [ms(t["b"]), ms(t["tb"]), ratio(t["tb"], t["b"]), t["src"], f"{t['bpn']:.0f}"]
            + [ratio(t["full_total"], t["full_fb"]) if "full_total" in t else "skipped"]
        )
    print_table(headers, rows)
    print_goals(builds, traces)

    if BIG in names:
        print(f"\nMemory of one build_graph on {BIG} (each in a fresh child process)")
        for scenario in ("fresh", "traced"):
            if scenario == "traced" and not hasattr(paddleviz_widget, "trace"):
                continue
            mem = bench_memory(BIG, scenario)
            if isinstance(mem, str):
                print(f"  {scenario:<6}: {mem}")
                continue
            print(
                f"  {scenario:<6}: Python heap peak {mib(mem['py_peak'])}, kept "
                f"{mib(mem['py_kept'])} (tracemalloc); RSS peak +{mib(mem['rss_peak'])}, "
                f"after +{mib(mem['rss_after'])}"
            )
            if "session_kept" in mem:
                print(
                    f"          the trace() block itself: Python heap peak "
                    f"{mib(mem['session_peak'])}, kept after it {mib(mem['session_kept'])}"
                )


if __name__ == "__main__":
    main()
