"""What checking every document on the way in costs: ``Graph.from_dict`` (decode + the schema
check of graph/check.py) against decode alone, interleaved, on the ~100k-GradNode chain.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_decode.py --reps 5
"""

from __future__ import annotations

import argparse

import common
from common import median_time, ms, ratio


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="chain-100k")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    from models import HUGE, MODELS

    from paddleviz_widget import build_graph, trace
    from paddleviz_widget.graph import Graph
    from paddleviz_widget.graph.check import check_parts
    from paddleviz_widget.graph.decode import _At, _decode_v2

    model, x = {**MODELS, **HUGE}[args.model]()
    with trace(model):
        y = model(x)
    doc = build_graph(y)
    parts = _decode_v2(doc, _At())
    print(f"{args.model}: {len(doc['nodes'])} nodes, {len(doc['edges'])} edges (machine loaded)")
    decode_only, checked, check_only = [], [], []
    for _ in range(args.reps):  # interleaved, so load changes hit both alike
        decode_only.append(median_time(lambda: _decode_v2(doc, _At()), 1))
        checked.append(median_time(lambda: Graph.from_dict(doc), 1))
        check_only.append(median_time(lambda: check_parts(parts), 1))
    mid = sorted(decode_only)[len(decode_only) // 2]
    full = sorted(checked)[len(checked) // 2]
    check = sorted(check_only)[len(check_only) // 2]
    common.print_table(
        ["decode only (ms)", "Graph.from_dict, checked (ms)", "check alone (ms)", "ratio"],
        [[ms(mid), ms(full), ms(check), ratio(full, mid)]],
    )


if __name__ == "__main__":
    main()
