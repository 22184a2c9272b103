"""A multi-rank run in the run explorer as the user feels it: ``GraphWidget.from_run`` of the 64
ranks x 2,000 steps x 1,000 parameters run (bench_ranks.py writes it) in a real JupyterLab,
timed in the page from the cell run to the painted first view (heatmap, rank x layer view,
cross-rank report), then to the picked step's detail; a rank switch in the toolbar's selector
and a step picked on the heatmap, each to its repainted view (a script, not a test).

    PYTHONPATH=. python benchmarks/bench_rank_lab.py                 # /tmp/pvw-ranks-64
    PYTHONPATH=. python benchmarks/bench_rank_lab.py --run-dir DIR --reps 5

JupyterLab on loopback (tests/browser/lab_server.py), headless Chromium; the cell is run with
Lab's ``notebook:run-cell`` (what Shift+Enter does). The run must be written already
(``python benchmarks/bench_ranks.py`` writes it once, ~11 minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import common
from bench_widget import ARGS, CHROMIUM, EXECUTE_JS, open_notebook

sys.path.insert(0, str(common.ROOT / "tests" / "browser"))
from lab_server import start_lab  # noqa: E402

OPEN = (
    "import time; from paddleviz_widget import GraphWidget\n"
    "_t, _c = time.perf_counter(), time.process_time()\n"
    "w = GraphWidget.from_run({path!r}, height=900)\n"
    "_kernel = (time.perf_counter() - _t, time.process_time() - _c)\n"
    "w"
)

# The frame after `done()` holds, and the time since `start`.
FRAME_JS = """const frame = () => new Promise((resolve) => requestAnimationFrame(() => {
    const c = new MessageChannel(); c.port1.onmessage = resolve; c.port2.postMessage(null); }));
  const until = async (ok, what) => {
    while (!ok()) {
      if (performance.now() - start > 60000) throw new Error(`not in 60 s: ${what}`);
      await new Promise((r) => setTimeout(r, 2));
    }
    await frame();
    return performance.now() - start;
  };"""

# Run the cell; ms to the first view painted (heatmap columns drawn, the rank grid's 64
# columns, the report's list filled), then to the picked step's detail.
OPEN_JS = (
    """async ([source, ranks]) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  nb.activeCellIndex = 0;
  nb.activeCell.model.sharedModel.setSource(source);
  const old = new Set(document.querySelectorAll("[data-testid=pvw-run-root]"));
  const root = () => [...document.querySelectorAll("[data-testid=pvw-run-root]")]
    .find((r) => !old.has(r));
  const q = (sel) => root()?.querySelector(`[data-testid=${sel}]`);
  const start = performance.now();
  const ran = window.jupyterapp.commands.execute("notebook:run-cell");
  """
    + FRAME_JS
    + """
  const first = await until(() => Number(q("pvw-run-heatmap")?.dataset.columns) > 0
    && q("pvw-run-rank-grid")?.dataset.ranks === String(ranks)
    && q("pvw-run-report")?.children.length > 0, "first view");
  const detail = await until(() => root().dataset.shownStep !== undefined
    && root().dataset.detail !== "loading", "step detail");
  await ran;
  return { first, detail, step: root().dataset.shownStep, detailKind: root().dataset.detail,
           report: q("pvw-run-report").innerText.slice(0, 300) };
}"""
)

# Pick rank `rank` in the selector of the last explorer: ms to its heatmap (title) and to its
# step detail (shownPath).
SWITCH_JS = (
    """async ([rank]) => {
  const roots = document.querySelectorAll("[data-testid=pvw-run-root]");
  const r = roots[roots.length - 1];
  const want = `rank-${String(rank).padStart(5, "0")}`;
  const select = r.querySelector("[data-testid=pvw-run-rank]");
  const start = performance.now();
  select.value = String(rank);
  select.dispatchEvent(new Event("change", { bubbles: true }));
  """
    + FRAME_JS
    + """
  const heat = await until(() => r.querySelector("[data-testid=pvw-run-title]").textContent
    .endsWith(want), "heatmap of " + want);
  const detail = await until(() => (r.dataset.shownPath || "").endsWith(want)
    && r.dataset.detail !== "loading", "detail of " + want);
  return { heat, detail };
}"""
)

# Click the heatmap's cell (i, row) of the last explorer: ms to the step's detail and the rank
# grid at that step (the kernel reads each rank's layer norms there).
PICK_JS = (
    """async ([i, row]) => {
  const roots = document.querySelectorAll("[data-testid=pvw-run-root]");
  const r = roots[roots.length - 1];
  const canvas = r.querySelector("[data-testid=pvw-run-heatmap]");
  const caption = r.querySelector("[data-testid=pvw-run-ranks-caption]");
  const p = canvas.pvwCell(i, row);
  const before = r.dataset.shownStep;
  const start = performance.now();
  for (const type of ["mousedown", "mouseup", "click"])
    canvas.dispatchEvent(new MouseEvent(type, { bubbles: true, clientX: p.x, clientY: p.y }));
  """
    + FRAME_JS
    + """
  const detail = await until(() => r.dataset.shownStep !== before
    && r.dataset.detail !== "loading", "step detail");
  const grid = await until(() => caption.textContent
    .startsWith(`Gradient norm per layer at step ${r.dataset.shownStep},`), "rank grid");
  return { detail, grid, step: r.dataset.shownStep };
}"""
)


def med(values: list[float]) -> float:
    return statistics.median(values)


def notebook(path: Path) -> None:
    cell = {"cell_type": "code", "metadata": {}, "source": "", "outputs": [],
            "execution_count": None}  # fmt: skip
    doc = {"cells": [cell], "metadata": {"kernelspec": {"name": "python3",
           "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    path.write_text(json.dumps(doc), encoding="utf-8")


def measure(run_dir: Path, reps: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    rows: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        notebooks = Path(tmp) / "notebooks"
        notebooks.mkdir()
        notebook(notebooks / "ranks.ipynb")
        server = start_lab(Path(tmp) / "lab", notebooks)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = open_notebook(browser, server, "ranks", "import paddleviz_widget")
            ranks = 64
            for rep in range(reps + 1):  # the first also loads the bundle: kept apart
                tag = " (first, bundle loaded)" if rep == 0 else ""
                got = page.evaluate(OPEN_JS, [OPEN.format(path=str(run_dir)), ranks])
                if rep == 0:
                    print(f"opened on step {got['step']} ({got['detailKind']}); report: "
                          f"{got['report']!r}")  # fmt: skip
                wall, cpu = json.loads(page.evaluate(EXECUTE_JS, "print(list(_kernel))"))
                rows.setdefault("cell run -> first view painted" + tag, []).append(got["first"])
                rows.setdefault("cell run -> step detail shown" + tag, []).append(got["detail"])
                rows.setdefault("  of which from_run in the kernel, wall" + tag, []).append(
                    wall * 1e3
                )
                rows.setdefault("  of which from_run in the kernel, CPU" + tag, []).append(
                    cpu * 1e3
                )
                page.wait_for_timeout(500)
                for rank in (0, 63, 37):
                    sw = page.evaluate(SWITCH_JS, [rank])
                    rows.setdefault("rank switch -> its heatmap", []).append(sw["heat"])
                    rows.setdefault("rank switch -> its step detail", []).append(sw["detail"])
                    page.wait_for_timeout(300)
                for i in (10, 200, 350):
                    pk = page.evaluate(PICK_JS, [i, 3])
                    rows.setdefault("step pick on the heatmap -> its detail", []).append(
                        pk["detail"]
                    )
                    rows.setdefault("step pick -> rank x layer view at it", []).append(pk["grid"])
                    page.wait_for_timeout(300)
            page.screenshot(path=str(Path(tmp).parent / "pvw-rank-lab.png"))
            page.close()
        finally:
            browser.close()
            server.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", default="/tmp/pvw-ranks-64")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    run_dir = Path(args.run_dir)
    if not (run_dir / "rank-00000" / "run.json").exists():
        sys.exit(f"{run_dir} holds no run: python benchmarks/bench_ranks.py writes it")
    load = os.getloadavg()[0]
    rows = measure(run_dir, args.reps)
    print(f"{run_dir}; medians of {args.reps} (the first open apart); load {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")  # fmt: skip
    for label, ms in rows.items():
        print(f"  {label:<52} {med(ms):8.0f} ms   (each: {', '.join(f'{v:.0f}' for v in ms)})")


if __name__ == "__main__":
    main()
