"""How long ``diff_graphs`` (GraphWidget.diff without building the graphs) takes on the 10k
Llama (a script, not a test; a few minutes, most of it building the graphs):

    python benchmarks/bench_diff.py [--reps 5] [--model llama-10k]

Four pairs of traced graphs of the same model, each diffed ``--reps`` times (median, ms):
  same       the model twice (other weights and input): nothing marked
  wider      one block's MLP twice as wide: changed shapes in that block
  shorter    the model without its last block: removed nodes and edges
  stats      two training steps under trace(stats=True): gradient statistics compared
``diff`` runs with the garbage collector paused, as GraphWidget.diff runs it (``gc on``: a
plain call, collections over the whole heap included); ``cpu`` is its CPU time
(time.process_time): on a machine shared with other work the wall time is longer by however
long the process waited for a CPU. ``summary`` is diff_summary on the diff document (paused
too). Goal: a diff well under a second.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import paddle
import paddle.nn as nn
from common import ms, print_table, timed
from models import HIDDEN, MLP_HIDDEN, MODELS

from paddleviz_widget import build_graph, trace
from paddleviz_widget.gc_pause import gc_paused
from paddleviz_widget.graph.diff import diff_graphs, diff_summary

GOAL_SECONDS = 1.0


def _traced(model: nn.Layer, x: paddle.Tensor, **options: Any) -> dict[str, Any]:
    with trace(model, **options):
        y = model(x)
        y.sum().backward()
    return build_graph(y)


def pairs(name: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    model, x = MODELS[name]()
    base = _traced(model, x)
    out = {}
    other, x2 = MODELS[name]()
    out["same"] = (base, _traced(other, x2))
    wide, x3 = MODELS[name]()
    mlp = wide.blocks[len(wide.blocks) // 2].mlp
    mlp.gate = nn.Linear(HIDDEN, 2 * MLP_HIDDEN, bias_attr=False)
    mlp.up = nn.Linear(HIDDEN, 2 * MLP_HIDDEN, bias_attr=False)
    mlp.down = nn.Linear(2 * MLP_HIDDEN, HIDDEN, bias_attr=False)
    out["wider"] = (base, _traced(wide, x3))
    short, x4 = MODELS[name]()
    short.blocks = nn.LayerList(list(short.blocks)[:-1])
    out["shorter"] = (base, _traced(short, x4))
    model, x = MODELS[name]()
    opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=model.parameters())
    first = _traced(model, x, stats=True)
    opt.step()
    opt.clear_grad()
    out["stats"] = (first, _traced(model, x, stats=True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--model", default="llama-10k", choices=sorted(MODELS))
    args = parser.parse_args()
    rows = []
    for label, (a, b) in pairs(args.model).items():
        times, cpu, plain, doc = [], [], [], None
        for _ in range(args.reps):
            start = time.process_time()
            with gc_paused():
                t, doc = timed(lambda a=a, b=b: diff_graphs(a, b))
            cpu.append(time.process_time() - start)
            times.append(t)
            plain.append(timed(lambda a=a, b=b: diff_graphs(a, b))[0])
        assert doc is not None
        with gc_paused():
            t_summary, summary = timed(lambda doc=doc: diff_summary(doc))
        counts = summary["counts"]
        marked = " ".join(f"{k} {v['nodes']}n/{v['edges']}e" for k, v in counts.items())
        diff_ms = statistics.median(times)
        rows.append(
            [
                label,
                f"{len(a['nodes'])}/{len(b['nodes'])}",
                f"{len(a['edges'])}/{len(b['edges'])}",
                ms(diff_ms),
                ms(statistics.median(cpu)),
                ms(statistics.median(plain)),
                ms(t_summary),
                marked,
                "yes" if diff_ms < GOAL_SECONDS else "NO",
            ]
        )
    print(f"{args.model}: diff_graphs, median of {args.reps} (ms); goal < {GOAL_SECONDS:.0f} s")
    headers = ["pair", "nodes a/b", "edges a/b", "diff", "cpu", "gc on", "summary", "marked"]
    headers.append("goal")
    print_table(headers, rows)


if __name__ == "__main__":
    main()
