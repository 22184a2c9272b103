"""What the static picture in every GraphWidget output costs in the kernel
(widget/static_picture.py):
the view rules in V8 (paddleviz_widget/export/view_rules.py), Graphviz's `dot`, the SVG check,
against build_graph and the whole ``_repr_mimebundle_`` a displayed widget runs.

    .venv/bin/python benchmarks/bench_static.py                       # resnet50, llama-10k
    .venv/bin/python benchmarks/bench_static.py --models lenet --reps 3

Each figure is the median of ``--reps`` runs after one warm-up (which also starts V8: its
one-off cost per process is printed apart).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

import common
from models import MODELS

from paddleviz_widget import build_graph, trace
from paddleviz_widget.export import render_picture, static_view
from paddleviz_widget.export.view_rules import static_view_of_json, svg_problem
from paddleviz_widget.widget import GraphWidget

DEFAULT_MODELS = ["resnet50", "llama-10k"]


def first_start() -> float:
    """Seconds the first view of the process takes over a later one (V8 start, bundle read)."""
    doc = json.loads((common.ROOT / "tests/fixtures/graphs/lenet.json").read_text())
    first, _ = common.timed(lambda: static_view(doc))
    return first - common.median_time(lambda: static_view(doc), 5)


def bench(name: str, reps: int) -> list[str]:
    model, x = MODELS[name]()
    with trace(model):
        y = model(x)
        y.sum().backward()
    build = common.median_time(lambda: build_graph(y, model=model), reps)
    graph = build_graph(y, model=model)
    text = json.dumps(graph, separators=(",", ":"))
    static_view_of_json(text, {"static": True})  # warm-up
    rules = common.median_time(lambda: static_view_of_json(text, {"static": True}), reps)
    view = static_view_of_json(text, {"static": True})
    layout = common.median_time(lambda: render_picture(view.dot, "svg"), reps)
    svg = render_picture(view.dot, "svg").decode()
    check = common.median_time(lambda: svg_problem(svg), reps)

    def make() -> GraphWidget:
        return GraphWidget.from_graph(graph)

    def shown() -> Any:
        return make()._repr_mimebundle_()

    widget = common.median_time(make, reps)
    # A widget made and displayed, as `GraphWidget(y)` at the end of a cell: its first
    # display reuses the JSON text made to send the graph to the page.
    whole = common.median_time(shown, reps)
    plain = common.median_time(lambda: super(GraphWidget, make())._repr_mimebundle_(), reps)
    data, _ = shown()
    return [
        name,
        f"{len(graph['nodes']):,}",
        str(len(view.visible)),
        common.ms(build),
        common.ms(widget),
        common.ms(rules),
        common.ms(layout),
        common.ms(check),
        common.ms(whole - widget),
        common.ms(plain - widget),
        f"{len(data['text/html']) / 1e3:.0f}",
    ]


# In a new process: a traced model, then `GraphWidget(y)` and its first display, timed; with
# "plain" the display leaves the static picture out (the figure without this feature).
FIRST = """import sys, time
sys.path.insert(0, {bench!r})
import common
from models import MODELS
from paddleviz_widget import trace
from paddleviz_widget.widget import GraphWidget
model, x = MODELS[{name!r}]()
with trace(model):
    y = model(x)
    y.sum().backward()
start = time.perf_counter()
w = GraphWidget(y)
made = time.perf_counter()
w._repr_mimebundle_() if {full} else super(GraphWidget, w)._repr_mimebundle_()
print(made - start, time.perf_counter() - made)
"""


def first_display(name: str, reps: int) -> list[str]:
    """Medians of `GraphWidget(y)` and its first display, each in a new process."""
    out = [name]
    for full in (True, False):
        runs = []
        for _ in range(reps):
            code = FIRST.format(bench=str(common.HERE), name=name, full=full)
            run = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            )
            runs.append([float(v) for v in run.stdout.split()])
        made, shown = (statistics.median(r[k] for r in runs) for k in (0, 1))
        out += [common.ms(made), common.ms(shown)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS, choices=sorted(MODELS))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--first-reps", type=int, default=3, help="new processes per figure")
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"V8 start + bundle, once per process: {common.ms(first_start())} ms")
    rows = [bench(name, args.reps) for name in args.models]
    common.print_table(
        [
            "model",
            "GradNodes",
            "visible",
            "build_graph ms",
            "widget ms",
            "view rules ms",
            "dot ms",
            "svg check ms",
            "repr ms",
            "repr w/o picture ms",
            "html kB",
        ],
        rows,
    )
    print(
        "widget: GraphWidget made from the graph (sends it to the page as JSON); view rules: "
        "V8 from the JSON text (read, index, default view, DOT); repr: the first "
        "_repr_mimebundle_ of a new widget, all of the picture included (view rules, dot, "
        "check, inline SVG); w/o picture: the same without the static fallback."
    )
    print()
    print("First display in a new process (V8 starts, nothing compiled yet):")
    common.print_table(
        [
            "model",
            "GraphWidget(y) ms",
            "display ms",
            "w/o picture: GraphWidget(y) ms",
            "display ms",
        ],
        [first_display(name, args.first_reps) for name in args.models],
    )
    print(f"({time.perf_counter() - start:.0f} s in all)")


if __name__ == "__main__":
    main()
