"""The run explorer at scale (a script, not a test):

    python benchmarks/bench_run_explorer.py [--steps 10000] [--layers 500] [--reps 5]

Writes a run log of --steps x 2*--layers parameters with the run log's own writer
(tests/run_logs.py big_run), then prints: what the kernel sends (RunWidget: time to build,
bytes of its buffers), one step's reply time, the saved page (time to write, size), and in
headless Chromium from file://: time from navigation to the heatmap drawn, and the time of a
zoom in / zoom in / zoom out / all-steps redraw (median over --reps rounds).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests/browser")]

REDRAWS_JS = """() => {
  const root = document.querySelector('[data-testid=pvw-run-root]');
  return ['zoom-in', 'zoom-in', 'zoom-out', 'all'].map((b) => {
    const t = performance.now();
    root.querySelector(`[data-testid=pvw-run-${b}]`).click();
    return performance.now() - t;
  });
}"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--layers", type=int, default=500)
    parser.add_argument("--reps", type=int, default=5)
    options = parser.parse_args()
    from chromium import CHROMIUM_ARGS, chromium_path
    from playwright.sync_api import sync_playwright
    from run_logs import big_run

    from paddleviz_widget.runs import open_run
    from paddleviz_widget.runs.view_page import save_run_html
    from paddleviz_widget.runs.view_widget import RunWidget

    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "big"
        big_run(run_dir, options.steps, options.layers)
        t = time.perf_counter()
        widget = RunWidget(run_dir)
        built = time.perf_counter() - t
        sent = sum(len(getattr(widget, k)) for k in ("_steps", "_loss", "_norms", "_bad"))
        print(f"run: {options.steps} steps x {2 * options.layers} parameters")
        print(f"RunWidget(run_dir): {built:.2f} s, buffers {sent / 1e6:.1f} MB")
        t = time.perf_counter()
        widget._summary(options.steps // 2)
        first = time.perf_counter() - t
        t = time.perf_counter()
        widget._summary(options.steps // 3)
        print(
            f"a step's summary: first {first * 1e3:.0f} ms, "
            f"then {(time.perf_counter() - t) * 1e3:.1f} ms"
        )
        page = Path(tmp) / "big.html"
        t = time.perf_counter()
        save_run_html(open_run(run_dir), page)
        print(f"saved page: {time.perf_counter() - t:.1f} s, {page.stat().st_size / 1e6:.1f} MB")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            tab = browser.new_page(viewport={"width": 1300, "height": 900})
            t = time.perf_counter()
            tab.goto(page.as_uri(), timeout=300_000)
            tab.wait_for_function(
                "() => document.querySelector('[data-testid=pvw-run-root]')?.dataset.shownStep",
                timeout=300_000,
            )
            print(f"page opened to a drawn heatmap and step: {time.perf_counter() - t:.1f} s")
            rounds = [tab.evaluate(REDRAWS_JS) for _ in range(options.reps)]
            names = ("zoom in", "zoom in", "zoom out", "all steps")
            cells = ", ".join(
                f"{n} {median(r[k] for r in rounds):.0f}" for k, n in enumerate(names)
            )
            print(f"redraws, median ms: {cells}")
            browser.close()


if __name__ == "__main__":
    main()
