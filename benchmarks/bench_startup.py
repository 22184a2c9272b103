"""Where a cell's time goes, from the cell run to the painted graph, in real JupyterLab and
Chromium: the kernel's timestamps (``GraphWidget(y)`` started, built, displayed) and the
page's performance marks (js: pvw:loader-init, pvw:bundle, worker-start/ready, wasm-compile, render,
graph-arrived/read, planned, layout, draw), all in ms after the cell was run, on one clock.
Rep 0 of each model is the page's first widget (a new page and kernel per model).

    .venv/bin/python benchmarks/bench_startup.py --models resnet50 llama-10k --reps 3
    .venv/bin/python benchmarks/bench_startup.py --fold-false    # GraphWidget(y, fold=False)
    .venv/bin/python benchmarks/bench_startup.py --cpu-profile /tmp/p  # + /tmp/p-<model>.cpuprofile
      of each page's first widget, /tmp/p-<model>-<rep>.cpuprofile of later ones (Chromium's
      sampling profiler, 0.2 ms; read it in DevTools)
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import bench_widget as bw
import common
from lab_server import start_lab

CELL = (
    "import time as _tm; _k0 = _tm.time() * 1e3; w = GraphWidget(y{extra}); "
    "_k1 = _tm.time() * 1e3; display(w); _k2 = _tm.time() * 1e3"
)
MARKS_JS = """() => performance.getEntries()
  .filter((e) => e.name.startsWith("pvw:"))
  .map((e) => [e.entryType, e.name, performance.timeOrigin + e.startTime, e.duration,
               JSON.stringify(e.detail ?? "")])"""
SETUP_JS = """async ([src]) => { const nb = window.jupyterapp.shell.currentWidget.content;
  nb.activeCellIndex = 0; nb.activeCell.model.sharedModel.setSource(src);
  await window.jupyterapp.commands.execute("notebook:run-cell"); }"""
RESET_JS = """() => { performance.clearMarks(); performance.clearMeasures();
  window.pvwT0 = performance.timeOrigin + performance.now();
  window.pvwFrames = []; window.pvwFrameObs?.disconnect();
  if (PerformanceObserver.supportedEntryTypes.includes("long-animation-frame")) {
    window.pvwFrameObs = new PerformanceObserver((l) => window.pvwFrames.push(...l.getEntries()));
    window.pvwFrameObs.observe({ type: "long-animation-frame" }); } }"""
# Frames over 50 ms (Long Animation Frames API): where the main thread went, scripts against
# style, layout and paint (render: from renderStart to the frame's end).
FRAMES_JS = """() => (window.pvwFrames || []).map((f) => [performance.timeOrigin + f.startTime,
  f.duration, f.renderStart ? f.startTime + f.duration - f.renderStart : 0,
  f.styleAndLayoutStart ? f.startTime + f.duration - f.styleAndLayoutStart : 0,
  f.scripts.map((s) => `${s.invoker || s.invokerType} ${Math.round(s.duration)}`).join("; ")])"""


def one_model(
    browser: Any,
    server: Any,
    name: str,
    reps: int,
    extra: str,
    quiet: bool = False,
    profile: str | None = None,
) -> list[float]:
    page = bw.open_notebook(browser, server, name)
    page.evaluate(SETUP_JS, [bw.SETUP.format(bench=str(common.HERE), name=name)])
    times = []
    for rep in range(reps):
        page.evaluate(RESET_JS)
        cdp = page.context.new_cdp_session(page) if profile else None
        if cdp:
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 200})
            cdp.send("Profiler.start")
        got = bw.run(page, 1, CELL.format(extra=extra), "new")
        if cdp:
            out = Path(f"{profile}-{name}{f'-{rep}' if rep else ''}.cpuprofile")
            out.write_text(json.dumps(cdp.send("Profiler.stop")["profile"]))
            cdp.detach()
        k = json.loads(
            page.evaluate(bw.EXECUTE_JS, "import json; print(json.dumps([_k0,_k1,_k2]))")
        )
        t0 = page.evaluate("() => window.pvwT0")
        times.append(got["ms"])
        page.wait_for_timeout(1500)
        if quiet:
            continue
        load = Path("/proc/loadavg").read_text()[:14]
        which = "the page's first widget" if rep == 0 else "a later widget"
        print(
            f"\n{name}, {which}: cell run -> painted {got['ms']:.0f} ms ({got['shown']} nodes, "
            f"longest task {got['worst']:.0f} ms; load {load})"
        )
        print(
            f"  kernel: GraphWidget(y) from +{k[0] - t0:.0f}, built +{k[1] - t0:.0f}, "
            f"displayed +{k[2] - t0:.0f}"
        )
        for kind, mark, at, ms, detail in sorted(page.evaluate(MARKS_JS), key=lambda m: m[2]):
            if at + ms >= t0:
                print(f"  {kind:8} {mark:18} +{at - t0:6.0f} ms  lasted {ms:5.0f} ms {detail[:70]}")
        for at, ms, render, style, scripts in page.evaluate(FRAMES_JS):
            print(
                f"  frame    +{at - t0:6.0f} ms  lasted {ms:5.0f} ms (rendering {render:.0f}, "
                f"style+layout+paint from {style:.0f} before the end) scripts: {scripts[:160]}"
            )
    page.close()
    return times


def first_paints(
    models: list[str], reps: int, extra: str = "", quiet: bool = False, profile: str | None = None
) -> dict[str, list[float]]:
    """Per model: ms from each cell run to its painted graph (the page's first widget first)."""
    from playwright.sync_api import sync_playwright

    results = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        notebooks = Path(tmp) / "notebooks"
        notebooks.mkdir()
        for name in models:
            bw.notebook(notebooks / f"{name}.ipynb", name)
        server = start_lab(Path(tmp) / "lab", notebooks)
        browser = pw.chromium.launch(executable_path=bw.CHROMIUM, args=bw.ARGS)
        try:
            for name in models:
                results[name] = one_model(browser, server, name, reps, extra, quiet, profile)
        finally:
            browser.close()
            server.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=["resnet50", "llama-10k"])
    parser.add_argument("--fold-false", action="store_true", help="GraphWidget(y, fold=False)")
    parser.add_argument("--cpu-profile", metavar="PREFIX", help="profile each widget")
    args = parser.parse_args()
    extra = ", fold=False" if args.fold_false else ""
    results = first_paints(args.models, args.reps, extra, profile=args.cpu_profile)
    print()
    for name, times in results.items():
        later = statistics.median(times[1:]) if len(times) > 1 else float("nan")
        print(f"{name}: the page's first widget {times[0]:.0f} ms, later {later:.0f} ms (median)")


if __name__ == "__main__":
    main()
