"""The run explorer's step picks on a saved page (``view -o``), the explorer alone (no kernel,
no JupyterLab around it), two front ends side by side under the same load (a script, not a
test):

    PYTHONPATH=. .venv/bin/python benchmarks/bench_run_picks_page.py --old DIR [--rounds 3]

DIR holds another build's static/ files (run_widget.js, run_widget.css, run_standalone.js),
e.g. the commit before a change: ``git checkout REV -- js && npm run build && cp -r
paddleviz_widget/static/. DIR && git checkout HEAD -- js && npm run build``. A run of 10,000
steps x 1,000 parameters (tests/run_logs.big_run) is saved once per front end; each round
opens each page in headless Chromium, sorts the Parameters table by norm, scrolls it, and
clicks ``›`` --picks times: ms from the click to the frame painted with the next step's table
(median), and Chromium's own main-thread totals per pick (layout, style, script, all tasks).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import common
from bench_rank_lab import FRAME_JS
from bench_run_picks import VIEW_JS, metrics, sorted_and_scrolled
from bench_widget import ARGS, CHROMIUM

sys.path.insert(0, str(common.ROOT / "tests"))

PICK_JS = (
    """async () => { const r = document.querySelector("[data-testid=pvw-run-root]");
  const before = r.dataset.shownStep;
  const start = performance.now();
  r.querySelector("[data-testid=pvw-run-next]").click();
  """
    + FRAME_JS
    + """
  return await until(() => r.dataset.shownStep !== before && r.dataset.detail === "params",
    "next step shown");
}"""
)


def save_pages(tmp: Path, old: Path) -> dict[str, Path]:
    from run_logs import big_run

    from paddleviz_widget.runs import open_run, view_page

    run_dir = tmp / "run"
    big_run(run_dir)
    pages = {"new": tmp / "new.html", "old": tmp / "old.html"}
    view_page.save_run_html(open_run(run_dir), pages["new"])
    own = view_page._static
    view_page._static = lambda name: (old / name).read_text(encoding="utf-8")  # type: ignore[assignment]
    try:
        view_page.save_run_html(open_run(run_dir), pages["old"])
    finally:
        view_page._static = own  # type: ignore[assignment]
    return pages


def one_round(browser: object, page_file: Path, picks: int) -> dict[str, object]:
    tab = browser.new_page(viewport={"width": 1300, "height": 900})  # type: ignore[attr-defined]
    tab.goto(page_file.as_uri(), timeout=300_000)
    root = tab.locator("[data-testid=pvw-run-root]")
    tab.wait_for_function(
        "() => document.querySelector('[data-testid=pvw-run-root]')?.dataset.detail === 'params'",
        timeout=300_000,
    )
    before, cdp = sorted_and_scrolled(tab, root)
    m0 = metrics(cdp)
    ms = [tab.evaluate(PICK_JS) for _ in range(picks)]
    m1 = metrics(cdp)
    after = tab.evaluate(VIEW_JS)
    tab.close()
    per = {k: (m1[k] - m0[k]) * 1e3 / picks for k in m0}
    kept = (before["sort"], before["scroll"]) == (after["sort"], after["scroll"])
    return {"ms": ms, "per": per, "kept": kept, "before": before, "after": after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--picks", type=int, default=8)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()[0]
    results: dict[str, list[dict[str, object]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        pages = save_pages(Path(tmp), args.old)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for _ in range(args.rounds):
                for name in ("old", "new"):
                    results[name].append(one_round(browser, pages[name], args.picks))
        finally:
            browser.close()
    print(f"saved page, 10,000 steps x 1,000 parameters, table sorted by norm and scrolled; "
          f"load {load:.1f} before, {os.getloadavg()[0]:.1f} after")  # fmt: skip
    for name, rounds in results.items():
        ms = [v for r in rounds for v in r["ms"]]  # type: ignore[attr-defined]
        per = {k: statistics.median(r["per"][k] for r in rounds) for k in rounds[0]["per"]}  # type: ignore[index]
        split = ", ".join(f"{k.replace('Duration', '')} {v:.0f}" for k, v in per.items())
        kept = all(r["kept"] for r in rounds)
        print(f"  {name}: step pick -> painted median {statistics.median(ms):.0f} ms "
              f"(min {min(ms):.0f}, max {max(ms):.0f}); per pick ms: {split}; "
              f"table's sort and scroll kept: {kept} ({rounds[-1]['before']['scroll']} -> "  # type: ignore[index]
              f"{rounds[-1]['after']['scroll']})")  # type: ignore[index]  # fmt: skip


if __name__ == "__main__":
    main()
