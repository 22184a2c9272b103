"""A search keystroke on the 10k-GradNode Llama, in headless Chromium (bench_browser's page):
from the input event to the matches highlighted and the next frame painted, then to the
widget ready again (a match inside a folded run unfolds it). Each query typed at once into an
empty box, the box cleared between; medians over --reps.

    .venv/bin/python benchmarks/bench_search.py --reps 5
"""

from __future__ import annotations

import argparse
import statistics

import common  # noqa: F401  (puts the repository on sys.path)
from bench_browser import ARGS, CHROMIUM, open_page, widget_state
from browser_page import serve_page
from playwright.sync_api import sync_playwright

QUERIES = ("Linear", "matmul", "softmax", "RMSNorm", "layers.3")
TYPE_JS = """async (text) => {
  const root = document.querySelector("[data-testid=pvw-root]");
  const box = root.querySelector("[data-testid=pvw-search]");
  const count = root.querySelector("[data-testid=pvw-search-count]");
  const start = performance.now();
  box.value = text;
  box.dispatchEvent(new Event("input", { bubbles: true }));
  while (!count.textContent) await new Promise((r) => setTimeout(r, 1));
  await window.pvwBench.framed();
  const painted = performance.now() - start;
  while (root.dataset.state !== "ready") await new Promise((r) => setTimeout(r, 5));
  await window.pvwBench.framed();
  const matches = root.querySelectorAll("svg .pvw-match").length;
  return [painted, performance.now() - start, count.textContent, matches];
}"""
CLEAR_JS = """async () => {
  const root = document.querySelector("[data-testid=pvw-root]");
  const box = root.querySelector("[data-testid=pvw-search]");
  box.value = "";
  box.dispatchEvent(new Event("input", { bubbles: true }));
  while (root.dataset.state !== "ready") await new Promise((r) => setTimeout(r, 5));
  await window.pvwBench.framed();
}"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    state = widget_state("llama-10k")
    with serve_page({"llama-10k": state["graph"]}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        bench = open_page(browser, url, ["llama-10k"], warm=True)
        bench.mount("llama-10k", state)
        times: dict[str, list[tuple[float, float]]] = {q: [] for q in QUERIES}
        found: dict[str, tuple[str, int]] = {}
        for _ in range(args.reps):
            for q in QUERIES:
                painted, ready, count, matches = bench.page.evaluate(TYPE_JS, q)
                times[q].append((painted, ready))
                found[q] = (count, matches)
                bench.page.evaluate(CLEAR_JS)
        browser.close()
    print(f"llama-10k search, {args.reps} reps, median ms (keystroke -> painted / -> ready):")
    for q in QUERIES:
        painted = statistics.median(t[0] for t in times[q])
        ready = statistics.median(t[1] for t in times[q])
        count, drawn = found[q]
        print(f"  {q!r:12} {painted:7.1f} {ready:7.1f}   count {count!r}, drawn {drawn}")


if __name__ == "__main__":
    main()
