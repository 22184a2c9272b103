"""Where a cell's time goes, from the cell run to the painted graph, in real JupyterLab and
Chromium: the kernel's timestamps (``GraphWidget(y)`` started, built, displayed) and the
page's performance marks (js: pvw:loader-init, pvw:bundle, worker-start/ready, wasm-compile, render,
graph-arrived/read, planned, layout, draw), all in ms after the cell was run, on one clock.
Rep 0 of each model is the page's first widget (a new page and kernel per model).

How the page's first widget starts (``--variants``, each a page and kernel of its own, taken in
turn ``--rounds`` times in one Lab so that the machine's load falls on all of them alike):
- ``preload``: the package imported in the set-up cell (model, trace, backward), as the
  notebooks and the README do; the page starts the explorer then (widget/page_preload.py);
- ``in-cell``: ``from paddleviz_widget import GraphWidget`` in the timed cell itself, the
  set-up cell importing ``trace`` alone (since round 18 the package's import preloads too:
  notebook_start.py);
- ``cold``: nothing of the package before the timed cell (set-up and backward with Paddle
  alone, as a torchviz user's notebook), which imports it and shows the graph;
- ``off``: as ``preload`` with ``PADDLEVIZ_WIDGET_PRELOAD=0`` (the page starts the explorer
  with the first widget, as before round 17); ``in-cell-off``: as ``in-cell``, turned off.

    .venv/bin/python benchmarks/bench_startup.py --models resnet50 llama-10k --reps 3
    .venv/bin/python benchmarks/bench_startup.py --models resnet50 --reps 2 --rounds 3 \
        --variants preload in-cell off --quiet      # the first widgets, alternated
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
    "import time as _tm; _k0 = _tm.time() * 1e3; {imports}w = GraphWidget(y{extra}); "
    "_k1 = _tm.time() * 1e3; display(w); _k2 = _tm.time() * 1e3"
)
VARIANTS = ("preload", "in-cell", "cold", "off", "in-cell-off")
_SETUP_IMPORT = "from paddleviz_widget import GraphWidget, trace\n"
_COLD_TRACE = "import contextlib\ntrace = lambda model: contextlib.nullcontext()\n"


def setup_cell(name: str, variant: str) -> str:
    """The page's set-up cell (model, trace, backward) for a start-up ``variant``."""
    setup = bw.SETUP.format(bench=str(common.HERE), name=name)
    assert _SETUP_IMPORT in setup
    if variant.endswith("off"):
        setup = 'import os; os.environ["PADDLEVIZ_WIDGET_PRELOAD"] = "0"\n' + setup
    if variant.startswith("in-cell"):
        setup = setup.replace(_SETUP_IMPORT, "from paddleviz_widget import trace\n")
    if variant == "cold":  # Paddle alone: the backward without trace()
        setup = setup.replace(_SETUP_IMPORT, _COLD_TRACE)
    return setup


def timed_cell(variant: str, rep: int, extra: str) -> str:
    first_in_cell = (variant.startswith("in-cell") or variant == "cold") and not rep
    imports = "from paddleviz_widget import GraphWidget; " if first_in_cell else ""
    return CELL.format(imports=imports, extra=extra)


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
    variant: str = "preload",
    notebook: str | None = None,
) -> list[float]:
    page = bw.open_notebook(browser, server, notebook or name)
    page.evaluate(SETUP_JS, [setup_cell(name, variant)])
    times = []
    for rep in range(reps):
        page.evaluate(RESET_JS)
        cdp = page.context.new_cdp_session(page) if profile else None
        if cdp:
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 200})
            cdp.send("Profiler.start")
        got = bw.run(page, 1, timed_cell(variant, rep, extra), "new")
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
            f"\n{name} ({variant}), {which}: cell run -> painted {got['ms']:.0f} ms "
            f"({got['shown']} nodes, longest task {got['worst']:.0f} ms; load {load})"
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
    models: list[str],
    reps: int,
    extra: str = "",
    quiet: bool = False,
    profile: str | None = None,
    variants: tuple[str, ...] = ("preload",),
    rounds: int = 1,
) -> dict[tuple[str, str], list[list[float]]]:
    """Per (model, variant): for each page, ms from each cell run to its painted graph (the
    page's first widget first); pages of every variant taken in turn, ``rounds`` times."""
    from playwright.sync_api import sync_playwright

    pages = [(r, name, v) for r in range(rounds) for name in models for v in variants]
    results: dict[tuple[str, str], list[list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        notebooks = Path(tmp) / "notebooks"
        notebooks.mkdir()
        for r, name, v in pages:  # a notebook per page: a page of its own gets a kernel of its own
            bw.notebook(notebooks / f"{name}-{v}-{r}.ipynb", name)
        server = start_lab(Path(tmp) / "lab", notebooks)
        browser = pw.chromium.launch(executable_path=bw.CHROMIUM, args=bw.ARGS)
        try:
            for r, name, v in pages:
                times = one_model(
                    browser, server, name, reps, extra, quiet, profile, v, f"{name}-{v}-{r}"
                )
                results.setdefault((name, v), []).append(times)
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
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=["preload"])
    parser.add_argument("--rounds", type=int, default=1, help="pages per model and variant")
    parser.add_argument("--quiet", action="store_true", help="the summary lines only")
    args = parser.parse_args()
    extra = ", fold=False" if args.fold_false else ""
    results = first_paints(
        args.models, args.reps, extra, args.quiet, args.cpu_profile, tuple(args.variants),
        args.rounds,
    )  # fmt: skip
    print(f"\nload {Path('/proc/loadavg').read_text()[:14]}")
    for (name, variant), runs in results.items():
        firsts = [times[0] for times in runs]
        later = [t for times in runs for t in times[1:]]
        print(
            f"{name} ({variant}): the page's first widget {statistics.median(firsts):.0f} ms "
            f"(median of {len(firsts)}: {', '.join(f'{t:.0f}' for t in firsts)}), later "
            f"{statistics.median(later) if later else float('nan'):.0f} ms (median of {len(later)})"
        )


if __name__ == "__main__":
    main()
