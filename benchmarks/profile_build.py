"""Where does build_graph spend its time on the ~10k-node graph?  (a script, not a test)

    python benchmarks/profile_build.py [--model llama-10k] [--cprofile] [--save doc.json]

For each way a graph gets built (`build_graph(model(x))`, which replays the backward for
annotations; `build_graph(y)` after a plain backward; `with trace(model)` then `build_graph(y)`)
it prints the thread CPU time of each stage of the tracer (and the whole's wall beside it),
measured by wrapping the tracer's functions in this process (no file is changed), what no
top-level stage holds (freeing what the build made, the callers' own lines), plus the garbage
collections the build triggered and the floor any Python walk pays: Paddle's own node_ptr() /
name() / next_functions.
Stages nest (indented ones run inside the one above); GC pauses land inside whichever stage
was allocating. A stage the tracer no longer has is skipped. Under trace(), "Tensor.backward"
is Paddle's own backward (VLOG 6 + dump on); log capture and parsing are listed after it.
--cprofile adds a cProfile listing of each build. --save writes the traced graph's document
(what the page reads: benchmarks/page_steps.mjs times the page's steps on it).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import importlib
import pstats
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common import median_time
from models import HUGE, MODELS

import paddleviz_widget
from paddleviz_widget import build_graph

P = "paddleviz_widget."
# (label, module, attribute): each is wrapped where the caller looks it up.
STAGES = [
    ("walk_backward_graph (build)", P + "tracer.build", "walk_backward_graph"),
    ("tensor_grad_info (roots)", P + "tracer.build", "tensor_grad_info"),
    ("collect_annotations", P + "tracer.build", "collect_annotations"),
    ("  _traced (session, records, scopes)", P + "tracer.merge.collect", "_traced"),
    ("  discover_model (gc scan)", P + "tracer.merge.collect", "discover_model"),
    ("  _params_layer", P + "tracer.merge.collect", "_params_layer"),
    ("    param_infos_by_ptr", P + "tracer.merge.collect", "param_infos_by_ptr"),
    ("  _other_models_layer", P + "tracer.merge.collect", "_other_models_layer"),
    ("  trace_record_layer", P + "tracer.merge.collect", "trace_record_layer"),
    ("    next_ptrs", P + "tracer.merge.collect", "next_ptrs"),
    ("  hooks_layer", P + "tracer.merge.collect", "hooks_layer"),
    ("  stats_layer", P + "tracer.merge.collect", "stats_layer"),
    ("  _pylayers (describe_pylayers)", P + "tracer.merge.collect", "_pylayers"),
    ("  _scopes_layer", P + "tracer.merge.collect", "_scopes_layer"),
    ("  param_groups_layer", P + "tracer.merge.collect", "param_groups_layer"),
    ("  _pylayers_layer", P + "tracer.merge.collect", "_pylayers_layer"),
    ("  find_leaves", P + "tracer.merge.collect", "find_leaves"),
    ("  replay_into", P + "tracer.merge.collect", "replay_into"),
    ("    paddle.grad (replayed backward)", "paddle.base.dygraph.base", "grad"),
    ("  _param_shaped_layer", P + "tracer.merge.collect", "_param_shaped_layer"),
    ("  _bare", P + "tracer.merge.collect", "_bare"),
    ("  bare_leaf_edges", P + "tracer.merge.collect", "bare_leaf_edges"),
    ("  unread_program_nodes", P + "tracer.merge.collect", "unread_program_nodes"),
    ("  merge_layer", P + "tracer.merge.collect", "merge_layer"),
    ("Tensor.backward (Paddle's, under trace)", "paddle", "Tensor.backward"),
    ("    KeptWalk (the walk kept for builds)", P + "tracer.capture.backward_record", "KeptWalk"),
    ("walk from the trace's record", P + "tracer.build", "recorded_walk"),
    ("    separate_log (fd 2 -> records)", P + "tracer.capture.stderr_capture", "separate_log"),
    ("    parse_glog_records", P + "tracer.capture.backward_capture", "parse_glog_records"),
    ("    parse_backward_dot", P + "tracer.capture.backward_capture", "parse_backward_dot"),
    ("annotated_rows (columns)", P + "tracer.build", "annotated_rows"),
    ("  sources_meta", P + "tracer.merge.graph_rows", "sources_meta"),
    ("  stats_meta", P + "tracer.merge.graph_rows", "stats_meta"),
    ("find_problems", P + "tracer.build", "find_problems"),
    ("Graph (programs' ops)", P + "tracer.build", "with_program_ops"),
    ("encode_rows (codec)", P + "tracer.build", "encode_rows"),
    ("Graph.to_dict", P + "graph.model", "Graph.to_dict"),
]


@contextmanager
def stage_timer() -> Iterator[dict[str, float]]:
    totals: dict[str, float] = defaultdict(float)
    undo: list[Callable[[], None]] = []
    for label, module_name, attr in STAGES:
        try:
            owner: Any = importlib.import_module(module_name)
            *path, name = attr.split(".")
            for part in path:
                owner = getattr(owner, part)
            original = getattr(owner, name)
        except (ImportError, AttributeError):
            continue

        def make(f: Any, label: str) -> Any:
            @functools.wraps(f)  # keeps inspect.signature: the tracer checks for a dump kwarg
            def wrapper(*args: Any, **kw: Any) -> Any:
                start = time.thread_time()  # CPU: the machine is shared, wall follows its load
                try:
                    return f(*args, **kw)
                finally:
                    totals[label] += time.thread_time() - start

            return wrapper

        wrapped = make(original, label)

        setattr(owner, name, wrapped)
        undo.append(lambda o=owner, n=name, f=original: setattr(o, n, f))
    try:
        yield totals
    finally:
        for restore in reversed(undo):
            restore()


def gc_pauses() -> tuple[Callable[[], dict[int, list[float]]], Callable[[], None]]:
    out: dict[int, list[float]] = defaultdict(list)
    start: list[float] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            start.append(time.perf_counter())
        elif start:
            out[info["generation"]].append(time.perf_counter() - start.pop())

    gc.callbacks.append(callback)
    return (lambda: dict(out)), (lambda: gc.callbacks.remove(callback))


def accessor_floor(root: Any) -> None:
    """Visit every GradNode once, touching only what any walk must call."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        fn = stack.pop()
        ptr = fn.node_ptr()
        if ptr in seen:
            continue
        seen.add(ptr)
        fn.name()
        stack.extend(n for n in fn.next_functions if n is not None)


def report(title: str, run: Callable[[], Any], use_cprofile: bool) -> None:
    profile = cProfile.Profile() if use_cprofile else None
    gcs, stop = gc_pauses()
    with stage_timer() as totals:
        start, cpu = time.perf_counter(), time.thread_time()
        if profile:
            profile.runcall(run)
        else:
            run()
        wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
    stop()
    print(f"\n== {title}: {wall * 1e3:.0f} ms wall, {cpu * 1e3:.0f} ms thread CPU")
    for label, _, _ in STAGES:
        if label in totals:
            print(f"  {label:<38} {totals[label] * 1e3:8.1f} ms  {totals[label] / cpu:5.0%}")
    # What no top-level stage holds: the caller's own lines, freeing what the build made.
    rest = cpu - sum(t for label, t in totals.items() if not label.startswith(" "))
    print(f"  {'(in no top-level stage)':<38} {rest * 1e3:8.1f} ms  {rest / cpu:5.0%}")
    for gen, pauses in sorted(gcs().items()):
        print(f"  gc gen{gen}: {len(pauses)} collections, {sum(pauses) * 1e3:.1f} ms")
    if profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llama-10k", choices=[*MODELS, *HUGE])
    parser.add_argument("--cprofile", action="store_true", help="also print cProfile listings")
    parser.add_argument("--save", help="write the traced graph's document (JSON) here")
    args = parser.parse_args()
    model, x = {**MODELS, **HUGE}[args.model]()
    model(x).sum().backward()  # warm-up
    model.clear_gradients()
    y = model(x)
    print(f"{args.model}: {len(build_graph(y)['nodes'])} GradNodes")
    floor = median_time(lambda: accessor_floor(y.grad_fn), 5, gc_off=True)
    print(f"Paddle accessors alone (node_ptr/name/next_functions): {floor * 1e3:.1f} ms")

    y = model(x)
    report("build_graph(model(x)), no backward yet", lambda: build_graph(y), args.cprofile)
    y.sum().backward()
    report("build_graph(y) after a plain backward", lambda: build_graph(y), args.cprofile)
    trace = getattr(paddleviz_widget, "trace", None)
    if trace is None:
        print("\n(trace() not available)")
        return
    model.clear_gradients()

    def traced_backward() -> None:
        nonlocal y
        with trace(model):
            y = model(x)
            y.sum().backward()

    report("with trace(model): forward + backward", traced_backward, args.cprofile)
    report("build_graph(y) after the traced backward", lambda: build_graph(y), args.cprofile)
    if args.save:
        from paddleviz_widget.widget.wire import json_bytes

        Path(args.save).write_bytes(json_bytes(build_graph(y)))


if __name__ == "__main__":
    main()
