"""What a GraphWidget(y) cell costs the page's main thread, in CPU time (load-proof-ish): each
cell (the default, folded view) run in a real JupyterLab under a Chrome trace, after a first
widget that loads the bundle. Per cell: cell run -> painted (bench_widget.py's measure), the
longest main-thread task by wall and by thread CPU, the main thread's CPU over the cell, the
biggest websocket message's task (wall / CPU: Chromium's own receipt of the kernel's message
plus JupyterLab's deserializing), and the kernel's GraphWidget(y) wall / process CPU.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lab_trace.py --model llama-100k --widgets 3

PYTHONPATH must be absolute (Lab's kernel runs in a temporary directory). On a loaded machine
the wall figures follow the load; the CPU columns much less.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import bench_widget as bw
import common
from lab_server import start_lab

CATEGORIES = ["devtools.timeline", "toplevel", "v8", "disabled-by-default-v8.gc"]
CELL = (
    "import time as _tm; _t = _tm.perf_counter(); _c = _tm.process_time(); w = GraphWidget(y); "
    "_k = (_tm.perf_counter() - _t, _tm.process_time() - _c); w"
)
SETUP_JS = """async ([src]) => { const nb = window.jupyterapp.shell.currentWidget.content;
  nb.activeCellIndex = 0; nb.activeCell.model.sharedModel.setSource(src);
  await window.jupyterapp.commands.execute("notebook:run-cell"); }"""


def main_thread_tasks(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The renderer main thread's top-level tasks, and its websocket message receipts."""
    trace = json.loads(path.read_text(encoding="utf-8"))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    mains = Counter(
        (e["pid"], e["tid"]) for e in events if names.get((e["pid"], e["tid"])) == "CrRendererMain"
    )
    main = mains.most_common(1)[0][0]
    mine = [e for e in events if (e["pid"], e["tid"]) == main and e.get("ph") == "X"]
    tasks = [e for e in mine if e["name"] == "ThreadControllerImpl::RunTask"]
    info = "chrome_mojo_event_info"
    socket = [
        e
        for e in mine
        if e["name"] == "Receive mojo message"
        and e.get("args", {}).get(info, {}).get("mojo_interface_tag")
        == "network.mojom.WebSocketClient"
    ]
    return tasks, socket


def summary(path: Path) -> dict[str, float]:
    tasks, socket = main_thread_tasks(path)
    biggest = max(socket, key=lambda e: e.get("tdur", 0), default={"dur": 0, "tdur": 0})
    return {
        "longest task": max(e["dur"] for e in tasks) / 1e3,
        "longest task CPU": max(e.get("tdur", 0) for e in tasks) / 1e3,
        "main thread CPU": sum(e.get("tdur", 0) for e in tasks) / 1e3,
        "websocket message": biggest["dur"] / 1e3,
        "websocket message CPU": biggest.get("tdur", 0) / 1e3,
    }


def traced_cells(model: str, widgets: int, keep: str | None) -> list[dict[str, float]]:
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        notebooks = Path(tmp) / "notebooks"
        notebooks.mkdir()
        bw.notebook(notebooks / f"{model}.ipynb", model)
        server = start_lab(Path(tmp) / "lab", notebooks)
        browser = pw.chromium.launch(executable_path=bw.CHROMIUM, args=bw.ARGS)
        try:
            page = bw.open_notebook(browser, server, model)
            page.evaluate(SETUP_JS, [bw.SETUP.format(bench=str(common.HERE), name=model)])
            for n in range(widgets + 1):  # the first loads the bundle: not traced
                path = Path(f"{keep or tmp + '/trace'}-{n}.json")
                if n:
                    browser.start_tracing(page=page, path=str(path), categories=CATEGORIES)
                got = bw.run(page, 3, CELL, "new")
                wall, cpu = json.loads(page.evaluate(bw.EXECUTE_JS, "print(list(_k))"))
                if n:
                    browser.stop_tracing()
                    row = {"painted": got["ms"], **summary(path), "kernel": wall, "kernel CPU": cpu}
                    rows.append(row)
                    load = Path("/proc/loadavg").read_text()[:14]
                    print(f"  widget {n} (load {load}): " + ", ".join(_fmt(row)), flush=True)
                page.wait_for_timeout(1500)
        finally:
            browser.close()
            server.stop()
    return rows


def _fmt(row: dict[str, float]) -> list[str]:
    return [
        f"{k} {v:.2f} s" if k.startswith("kernel") else f"{k} {v:.0f} ms" for k, v in row.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="llama-100k")
    parser.add_argument("--widgets", type=int, default=3)
    parser.add_argument("--keep", metavar="PREFIX", help="keep the traces as PREFIX-<n>.json")
    args = parser.parse_args()
    rows = traced_cells(args.model, args.widgets, args.keep)
    medians = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print("  medians: " + ", ".join(_fmt(medians)))


if __name__ == "__main__":
    main()
