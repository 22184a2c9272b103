"""What a two-document protocol's first document would cost the kernel (issue 22 item 5): the
same graph with its layer groups and parameter names but no per-edge annotations (a
"skeleton": the walk, the layer scopes, Nodes and Edges, the JSON dict), against the whole
``build_graph(y)``, alternated in one process on one traced graph (CPU and wall medians).
A measurement, not the package's code: the skeleton is put together here from the tracer's
own stages. ``--save`` writes the skeleton's document (page_steps.mjs times the page on it).

    PYTHONPATH=. .venv/bin/python benchmarks/skeleton_cost.py --model llama-100k --reps 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from models import HUGE, MODELS

from paddleviz_widget import build_graph, trace
from paddleviz_widget.gc_pause import gc_paused
from paddleviz_widget.tracer.merge import collect
from paddleviz_widget.tracer.merge.annotate import Annotations, annotated_graph, merge_layer
from paddleviz_widget.tracer.read.inputs import normalize_roots
from paddleviz_widget.tracer.read.tensor_info import tensor_grad_info
from paddleviz_widget.tracer.read.walk import walk_backward_graph
from paddleviz_widget.widget.wire import json_bytes


def skeleton(y: Any, model: Any) -> dict[str, Any]:
    """The walk, parameter names and layer groups only (no trace record: no edge's dtype or
    shape, no Paddle call stacks, no statistics)."""
    with gc_paused():
        roots = normalize_roots(y)
        walk = walk_backward_graph([r.grad_fn for r in roots])
        graph = collect._Graph(walk)
        session, records, scopes = collect._traced(graph)
        ann = Annotations()
        merge_layer(ann, collect._params_layer(model, None, session))
        merge_layer(ann, collect._scopes_layer(scopes, graph, trusted=bool(records)))
        tensors = {i: tensor_grad_info(r.tensor) for i, r in zip(walk.root_indices, roots)}
        return annotated_graph(walk, ann, tensors).to_dict()


def timed(fn: Any) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="llama-100k", choices=[*MODELS, *HUGE])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--save", type=Path)
    args = parser.parse_args()
    model, x = {**MODELS, **HUGE}[args.model]()
    with trace(model):
        y = model(x)
        y.sum().backward()
    rows: dict[str, list[tuple[float, float]]] = {"skeleton": [], "build_graph": []}
    sizes = {}
    for _ in range(args.reps):  # alternated
        for label, fn in (
            ("skeleton", lambda: skeleton(y, model)),
            ("build_graph", lambda: build_graph(y, model=model)),
        ):
            wall, cpu, doc = timed(fn)
            rows[label].append((wall, cpu))
            sizes[label] = (len(json_bytes(doc)), len(doc["nodes"]), len(doc["edges"]))
            if label == "skeleton" and args.save:
                args.save.write_bytes(json_bytes(doc))
    print(f"{args.model}: medians of {args.reps}, alternated in one process")
    for label, times in rows.items():
        wall = statistics.median(t[0] for t in times)
        cpu = statistics.median(t[1] for t in times)
        size, nodes, edges = sizes[label]
        print(
            f"  {label:12} {wall * 1e3:8.0f} ms wall {cpu * 1e3:8.0f} ms CPU"
            f"  {size / 1e6:5.1f} MB, {nodes:,} nodes, {edges:,} edges"
        )


if __name__ == "__main__":
    main()
