"""The run explorer's step picks and refreshes as the user feels them, in a real JupyterLab
(a script, not a test):

    PYTHONPATH=. .venv/bin/python benchmarks/bench_run_picks.py [--steps 10000] [--picks 8]

A run of --steps x 1,000 parameters (tests/run_logs.big_run, the run log's own writer) is
left open in the kernel (its run.json says "running"), shown with GraphWidget.from_run, the
Parameters table sorted by norm and scrolled; then ``›`` is clicked --picks times (each: ms
from the click to the frame painted with the new step's table, and the longest task), and
the kernel writes 5 steps and calls ``w.refresh()`` --refreshes times (each: the longest
task on the page from the call to the frame painted with the new steps). After both, the
table's sort and scroll and the picked layer are checked to have stayed.
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
from bench_rank_lab import FRAME_JS, notebook
from bench_widget import ARGS, CHROMIUM, EXECUTE_JS, open_notebook

sys.path.insert(0, str(common.ROOT / "tests" / "browser"))
from lab_server import start_lab  # noqa: E402

OPEN = """import sys; sys.path.insert(0, {tests!r})
from run_logs import big_run, big_step
from paddleviz_widget import GraphWidget
writer = big_run({path!r}, {steps}, keep_open=True)
w = GraphWidget.from_run({path!r}, height=900)
w"""

# Long tasks as they happen (PerformanceObserver), for the longest in a window of time.
LONG_TASKS_JS = """() => {
  window.pvwLong = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries())
    window.pvwLong.push([e.startTime, e.duration]); }).observe({ entryTypes: ["longtask"] });
}"""

ROOT_JS = """const roots = document.querySelectorAll("[data-testid=pvw-run-root]");
  const r = roots[roots.length - 1];
  const longest = (t0) => Math.max(0, ...window.pvwLong.filter(([s]) => s >= t0 - 1)
    .map(([, d]) => d));"""

OPENED_JS = (
    """async () => { const start = performance.now(); """
    + FRAME_JS
    + """
  return await until(() => document.querySelector("[data-testid=pvw-run-root]")?.dataset
    .detail === "params", "opened");
}"""
)

PICK_JS = (
    """async () => { """
    + ROOT_JS
    + """
  const before = r.dataset.shownStep;
  const start = performance.now();
  r.querySelector("[data-testid=pvw-run-next]").click();
  """
    + FRAME_JS
    + """
  const ms = await until(() => r.dataset.shownStep !== before
    && r.dataset.detail === "params", "next step shown");
  await new Promise((res) => setTimeout(res, 100));
  return { ms, longest: longest(start), step: r.dataset.shownStep };
}"""
)

# Steps shown, ms since `start` to the frame after they changed, and the longest task since.
REFRESHED_JS = (
    """async ([n, t0]) => { const start = t0; """
    + ROOT_JS
    + FRAME_JS
    + """
  const ms = await until(() => r.dataset.steps === String(n), "steps " + n);
  await new Promise((res) => setTimeout(res, 100));
  return { ms, longest: longest(start) };
}"""
)

# The table's view: sorted column, its scroll, the lit rows' layer.
VIEW_JS = """() => { const r = [...document.querySelectorAll("[data-testid=pvw-run-root]")].pop();
  const t = r.querySelector("[data-testid=pvw-run-summary]");
  return { sort: [...t.querySelectorAll("th")].map((th) => th.getAttribute("aria-sort")),
    scroll: t.parentElement.scrollTop, layer: r.dataset.layer,
    lit: t.querySelectorAll("tr.pvw-run-lit").length }; }"""


def metrics(cdp: object) -> dict[str, float]:
    """Chromium's own totals of the main thread's work so far (seconds)."""
    got = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}  # type: ignore[attr-defined]
    keys = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
    return {k: got[k] for k in keys}


def sorted_and_scrolled(page: object, root: object) -> tuple[dict[str, object], object]:
    """The Parameters table sorted by norm and scrolled down (what the picks must keep): its
    view then, and a CDP session counting the main thread's work from here
    (bench_run_picks_page.py's saved pages too)."""
    root.get_by_test_id("pvw-run-summary").locator("th", has_text="norm").click()  # type: ignore[attr-defined]
    root.locator(".pvw-run-table-wrap").evaluate("(w) => { w.scrollTop = 4000; }")  # type: ignore[attr-defined]
    page.wait_for_timeout(500)  # type: ignore[attr-defined]
    before = page.evaluate(VIEW_JS)  # type: ignore[attr-defined]
    cdp = page.context.new_cdp_session(page)  # type: ignore[attr-defined]
    cdp.send("Performance.enable")
    return before, cdp


def med(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--picks", type=int, default=8)
    parser.add_argument("--refreshes", type=int, default=4)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        notebooks = Path(tmp) / "notebooks"
        notebooks.mkdir()
        notebook(notebooks / "picks.ipynb")
        server = start_lab(Path(tmp) / "lab", notebooks)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = open_notebook(browser, server, "picks", "import paddleviz_widget")
            page.evaluate(LONG_TASKS_JS)
            run = str(Path(tmp) / "run")
            source = OPEN.format(tests=str(common.ROOT / "tests"), path=run, steps=args.steps)
            page.evaluate(
                """async ([src]) => { const nb = window.jupyterapp.shell.currentWidget.content;
                nb.activeCellIndex = 0; nb.activeCell.model.sharedModel.setSource(src);
                await window.jupyterapp.commands.execute("notebook:run-cell"); }""",
                [source],
            )
            page.evaluate(OPENED_JS)
            root = page.locator("[data-testid=pvw-run-root]").last
            before, cdp = sorted_and_scrolled(page, root)
            m0 = metrics(cdp)
            picks = [page.evaluate(PICK_JS) for _ in range(args.picks)]
            m1 = metrics(cdp)
            after_picks = page.evaluate(VIEW_JS)
            refreshes = []
            steps = args.steps
            m2 = metrics(cdp)
            for _ in range(args.refreshes):
                t0 = page.evaluate("() => performance.now()")
                code = f"for s in range({steps}, {steps + 5}): big_step(writer, s)\nw.refresh()"
                page.evaluate(EXECUTE_JS, code)
                steps += 5
                refreshes.append(page.evaluate(REFRESHED_JS, [steps, t0]))
            m3 = metrics(cdp)
            after_refresh = page.evaluate(VIEW_JS)
            page.evaluate(EXECUTE_JS, "writer.close()")
            page.close()
        finally:
            browser.close()
            server.stop()
    print(f"{args.steps} steps x 1,000 parameters; load {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")  # fmt: skip
    ms = [p["ms"] for p in picks]
    lt = [p["longest"] for p in picks]
    print(
        f"  step pick (›) -> painted     median {med(ms):6.0f} ms  (each: "
        f"{', '.join(f'{v:.0f}' for v in ms)}); longest task median {med(lt):.0f} ms"
    )
    lt = [r["longest"] for r in refreshes]
    print(f"  refresh (5 new steps): longest page task median {med(lt):6.0f} ms  (each: "
          f"{', '.join(f'{v:.0f}' for v in lt)})")  # fmt: skip
    split = ", ".join(f"{k} {(m1[k] - m0[k]) * 1e3 / len(picks):.0f}" for k in m0)
    print(f"  per pick, the page's main thread (ms): {split}")
    split = ", ".join(f"{k} {(m3[k] - m2[k]) * 1e3 / len(refreshes):.0f}" for k in m2)
    print(f"  per refresh, the page's main thread (ms): {split}")
    print(f"  table view before: {json.dumps(before)}")
    print(f"  after the picks:   {json.dumps(after_picks)}")
    print(f"  after refreshes:   {json.dumps(after_refresh)}")


if __name__ == "__main__":
    main()
