"""JSON bytes per GradNode of ``build_graph`` (schema 2.0) against the 1.0 nested layout of
the same graph, per model (a script, not a test; about a minute, sizes do not vary by run):

    python benchmarks/bench_json_size.py [--models lenet resnet50 ...]

Bytes are ``len(json.dumps(doc, separators=(",", ":")))`` / GradNodes, as in bench_tracer.py.
  fresh      build_graph(model(x)): the replayed backward annotates it, no layer groups
  traced     with trace(model): forward + backward, then build_graph (the default knobs)
  full       with trace(model, slots=True, call_sites=True): every slot and per-op call site,
             the most a document carries
"""

from __future__ import annotations

import argparse
from typing import Any

from common import json_bytes, print_table
from models import MODELS

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import nested_dict

GOAL_BYTES_PER_NODE = 300


def documents(name: str) -> dict[str, dict[str, Any]]:
    model, x = MODELS[name]()
    out = {"fresh": build_graph(model(x))}
    for label, knobs in (("traced", {}), ("full", {"slots": True, "call_sites": True})):
        model, x = MODELS[name]()
        with trace(model, **knobs):
            y = model(x)
            y.sum().backward()
        out[label] = build_graph(y)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", choices=list(MODELS), default=list(MODELS))
    args = parser.parse_args()
    rows, worst = [], 0.0
    for name in args.models:
        docs = documents(name)
        nodes = len(docs["fresh"]["nodes"])
        row = [name, f"{nodes:,}"]
        for doc in docs.values():
            v2 = json_bytes(doc) / len(doc["nodes"])
            v1 = json_bytes(nested_dict(doc)) / len(doc["nodes"])
            worst = max(worst, v2)
            row.append(f"{v2:.0f} ({v1:.0f})")
        row.append("+".join(docs["full"]["meta"].get("annotations", [])))
        rows.append(row)
        print(f"{name}: done", flush=True)
    print("\nB/node, schema 2.0 (1.0 layout of the same graph in brackets)\n")
    print_table(["model", "GradNodes", "fresh", "traced", "full", "full annotations"], rows)
    met = "met" if worst <= GOAL_BYTES_PER_NODE else "NOT met"
    print(f"\ngoal: JSON <= {GOAL_BYTES_PER_NODE} B/node everywhere: {met} (largest {worst:.0f})")


if __name__ == "__main__":
    main()
