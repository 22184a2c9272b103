"""Regression guard for issue 22 (a cell, a widget, a click): the figures that tell whether a
change slowed the notebook, one line each against its goal. Not run by the test command.

- GraphWidget(y) on the 10k-GradNode Llama, in this process (wall and CPU time; of which
  build_graph, and the widget's own share);
- what displaying a widget costs its cell, in a real ipykernel as JupyterLab drives it (the
  execute request names its cell): the main thread's CPU and wall time of ``display(w)``, the
  page's first widget apart from later ones, and how long until the static picture for saved
  notebooks arrives (made after the widget, off the cell's time);
- the 100k scale (item 5; ``--no-huge`` skips it, ~40 s): GraphWidget(y) on llama-100k (1,300
  decoder blocks, ~97k GradNodes) in this process, the kernel's share of the 3 s goal, with
  the process's peak memory;
- ``--lab``: through real JupyterLab + Chromium (benchmarks/bench_widget.py,
  bench_startup.py): cell run to the painted graph, ResNet-50 and llama-10k (the page's first
  widget apart), clicks on a group of each, and the Llama's groups opened from the kernel to the
  repainted graph;
  with the 100k scale, llama-100k's folded default view (goal 3 s) and its longest main-thread
  task (goal 0.2 s).

    .venv/bin/python benchmarks/regression_guard.py            # --reps N (default 3), --lab
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

import common

GOAL_WIDGET = 0.3  # GraphWidget(y), 10k-GradNode Llama, plain process
GOAL_DISPLAY = 0.05  # kernel time a display costs its cell
GOAL_FIRST_PAINT = 0.7  # cell run -> painted graph, 10k Llama, the page's first widget included
GOAL_FIRST_RESNET = 0.5  # the same for ResNet-50 (its default view)
GOAL_CLICK = 0.1  # a group opened or closed -> its nodes in the page
GOAL_HUGE = 3.0  # cell run -> first painted (folded) view, 100k-GradNode Llama
GOAL_HUGE_TASK = 0.2  # the page's longest main-thread task meanwhile


def line(label: str, seconds: float, goal: float, note: str = "") -> None:
    verdict = "ok  " if seconds <= goal else "SLOW"
    print(f"{verdict} {label:<58} {seconds * 1e3:8.1f} ms  (goal {goal * 1e3:.0f} ms){note}")


def widget_in_process(reps: int) -> None:
    from models import HUGE, MODELS

    from paddleviz_widget import GraphWidget, build_graph, trace

    model, x = {**MODELS, **HUGE}["llama-10k"]()
    with trace(model):
        y = model(x)
        y.sum().backward()
    GraphWidget(y)  # imports and first-use caches: a notebook has them from its trace cell
    walls, cpus, builds = [], [], []
    for _ in range(reps):
        start, cpu = time.perf_counter(), time.process_time()
        GraphWidget(y)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        start = time.perf_counter()
        build_graph(y)
        builds.append(time.perf_counter() - start)
    wall, build = statistics.median(walls), statistics.median(builds)
    note = f"  CPU {statistics.median(cpus):.3f} s; build_graph {build:.3f} s"
    line("GraphWidget(y), llama-10k, this process (wall)", wall, GOAL_WIDGET, note)
    print(f"     of which the widget's own (GraphWidget(y) - build_graph): {wall - build:.3f} s")


def huge_in_process(reps: int) -> None:
    """GraphWidget(y) on the 100k-GradNode Llama: what the kernel alone takes of the 3 s."""
    import resource

    from models import HUGE

    from paddleviz_widget import GraphWidget, trace

    model, x = HUGE["llama-100k"]()
    with trace(model):
        y = model(x)
        y.sum().backward()
    walls, cpus = [], []
    for _ in range(reps):
        start, cpu = time.perf_counter(), time.process_time()
        GraphWidget(y)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    note = f"  CPU {statistics.median(cpus):.2f} s; peak RSS {peak:,.0f} MB"
    line(
        "GraphWidget(y), llama-100k, this process (wall)", statistics.median(walls), GOAL_HUGE, note
    )


SETUP = """import sys, time
sys.path.insert(0, {bench!r})
import models
from IPython.display import display
from paddleviz_widget import GraphWidget, trace
model, x = models.MODELS["resnet50"]()
with trace(model):
    y = model(x)
    y.sum().backward()
w = GraphWidget(y)
"""
DISPLAY = """w = GraphWidget.from_graph(w.graph)
_t, _c = time.thread_time(), time.perf_counter()
display(w)
_cost = [time.thread_time() - _t, time.perf_counter() - _c]
"""


def _execute(
    kc: Any, code: str, cell: str | None, expr: str | None = None
) -> tuple[Any, list[dict]]:
    """Run ``code`` as JupyterLab would (its execute request names the cell), or as nbclient
    would (``cell`` None: no name); the value of ``expr`` and the iopub messages until the
    kernel is idle."""
    content = {
        "code": code,
        "silent": False,
        "store_history": False,
        "user_expressions": {"v": expr} if expr else {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    metadata = {"cellId": cell} if cell else {}
    msg = kc.session.msg("execute_request", content, metadata=metadata)
    kc.shell_channel.send(msg)
    reply = kc.get_shell_msg(timeout=300)
    while reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
        reply = kc.get_shell_msg(timeout=300)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{code!r} failed: {reply['content']}")
    messages = []
    while True:
        m = kc.get_iopub_msg(timeout=300)
        messages.append(m)
        idle = m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
        if idle and m["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            break
    value = None
    if expr:
        import ast

        value = ast.literal_eval(reply["content"]["user_expressions"]["v"]["data"]["text/plain"])
    return value, messages


def _picture_after(kc: Any, start: float, timeout: float = 60) -> float:
    """Seconds from ``start`` until the kernel sends the static picture (an update)."""
    while time.perf_counter() - start < timeout:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["msg_type"] == "update_display_data" and "<svg" in str(m["content"]["data"]):
            return time.perf_counter() - start
    raise RuntimeError("no static picture arrived")


def _painted(kc: Any, messages: list[dict]) -> None:
    """Say to the widget the cell opened what its page says once it has painted it (the
    kernel makes the static picture after that: widget/late_picture.py)."""
    from paddleviz_widget.widget.late_picture import PAINTED

    for m in messages:
        if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("_anywidget_id"):
            content = {"method": "custom", "content": {"type": PAINTED}}
            data = {"comm_id": m["content"]["comm_id"], "data": content}
            kc.shell_channel.send(kc.session.msg("comm_msg", data))


def display_in_kernel(reps: int) -> None:
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "PYTHONPATH": str(common.ROOT)}  # this copy of the package
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    rows: list[tuple[float, float, float]] = []
    in_cell: list[list[float]] = []  # as nbclient runs it: the picture made in the cell (as before)
    try:
        _execute(kc, SETUP.format(bench=str(common.HERE)), "setup")
        for rep in range(reps + 1):
            start = time.perf_counter()
            cost, messages = _execute(kc, DISPLAY, f"show{rep}", "_cost")
            shown = [m for m in messages if m["msg_type"] == "display_data"]
            if any("<svg" in str(m["content"]["data"]) for m in shown):
                raise RuntimeError("the picture was made in the cell")
            _painted(kc, messages)
            rows.append((cost[0], cost[1], _picture_after(kc, start)))
            if rep > 0:
                in_cell.append(_execute(kc, DISPLAY, None, "_cost")[0])
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    first, later = rows[0], rows[1:]
    for label, (cpu, wall, late) in (
        ("the page's first widget", first),
        (f"later widgets (median of {len(later)})", tuple(map(statistics.median, zip(*later)))),
    ):
        note = f"  wall {wall * 1e3:.1f} ms; picture {late:.2f} s after the cell (painted at once)"
        line(f"display(w) CPU in the cell, ResNet-50, {label}", cpu, GOAL_DISPLAY, note)
    print(
        "     the same display as nbclient runs it (the picture made in the cell, V8 and `dot` "
        f"off the main thread's CPU): {statistics.median(c[1] for c in in_cell) * 1e3:.1f} ms wall"
    )


def in_lab(reps: int, huge: bool) -> None:
    import bench_startup
    import bench_widget

    # The page's first widget, a page per run (medians of ``reps`` pages), with GraphWidget
    # imported in the set-up cell and in the timed cell itself (``trace`` imported before: the
    # explorer is preloaded with the package either way, notebook_start.py); later widgets
    # pooled. (bench_startup's ``cold`` variant, nothing of the package before the cell, is
    # another kernel workload: GraphWidget(y) without trace() replays the backward.)
    # ResNet-50's default view has 113 nodes; llama-10k's (fold=False) 141.
    firsts = bench_startup.first_paints(
        ["resnet50", "llama-10k"], 2, quiet=True, variants=("preload", "in-cell"), rounds=reps
    )
    for (name, variant), runs in firsts.items():
        goal = GOAL_FIRST_RESNET if name == "resnet50" else GOAL_FIRST_PAINT
        where = "an earlier cell" if variant == "preload" else "the cell, trace earlier"
        ms = statistics.median(times[0] for times in runs)
        pages = ", ".join(f"{t[0]:.0f}" for t in runs)
        label = f"{name} in JupyterLab: cell run -> painted (first; imported in {where})"
        line(label, ms / 1e3, goal, f"  {len(runs)} pages: {pages} ms")
    resnet_later = [t for times in firsts["resnet50", "preload"] for t in times[1:]]
    later_ms = statistics.median(resnet_later)
    line("resnet50 in JupyterLab: cell run -> painted (later)", later_ms / 1e3, GOAL_FIRST_RESNET)

    # Clicks on both models (item 3); the Llama's later cells and groups opened from the kernel.
    labs = bench_widget.in_lab(["resnet50", "llama-10k"], reps)
    for name, rows in labs.items():
        for label, (seconds, worst, _shown) in rows.items():
            note = f"  longest task {worst:.3f} s"
            if label == "cell run -> painted" and name == "llama-10k":  # first ones: above
                line(f"{name} in JupyterLab: {label}", seconds, GOAL_FIRST_PAINT, note)
            elif label.startswith("click"):
                line(f"{name} in JupyterLab: {label}", seconds, GOAL_CLICK, note)
            elif "expand(" in label or "collapse(" in label:  # a kernel round trip: no goal
                print(f"     {name} in JupyterLab: {label:<44} {seconds * 1e3:8.1f} ms{note}")
    if huge:
        rows = bench_widget.in_lab(["llama-100k"], 1)["llama-100k"]
        seconds, worst, _shown = rows["cell run -> painted, default view (folded)"]
        line("llama-100k in JupyterLab: cell run -> painted (folded)", seconds, GOAL_HUGE)
        line("llama-100k in JupyterLab: its longest main-thread task", worst, GOAL_HUGE_TASK)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--lab", action="store_true", help="also through JupyterLab + Chromium")
    parser.add_argument("--no-huge", action="store_true", help="skip the 100k-GradNode Llama")
    args = parser.parse_args()
    print(f"medians of {args.reps} runs; load average {Path('/proc/loadavg').read_text()[:14]}")
    widget_in_process(args.reps)
    display_in_kernel(args.reps)
    if not args.no_huge:
        huge_in_process(min(args.reps, 2))
    if args.lab:
        in_lab(args.reps, not args.no_huge)


if __name__ == "__main__":
    main()
