"""A widget read forward, its repeated blocks unfolded (GraphWidget.view / .fold), saved with
w.save(".html"): the saved page, opened from file:// in a fresh browser with the network
blocked, must draw what the widget drew (the same nodes, the same labels). It opened read
backward and folded. (tests/browser/notebooks/diff_fold.ipynb: a diff of two steps.)"""

from __future__ import annotations

from pathlib import Path

from explorer_page import GRAPH, Explorer
from lab_page import save_screenshot
from local_only import route_local_only

NOTEBOOK = "diff_fold.ipynb"

# Per drawn node: its id and the lines of its label.
LABELS_JS = """(sel) => Object.fromEntries([...document.querySelectorAll(`${sel} svg g.node`)]
  .map((g) => [g.id, [...g.querySelectorAll('text')].map((t) => t.textContent)]))"""


def test_a_saved_page_opens_in_the_reading_and_folding_of_the_widget(
    explorer: Explorer, chromium_browser, tmp_path: Path
) -> None:
    before = explorer.renders()
    explorer.run("w.view = 'forward'; w.fold = False")
    explorer.wait_ready(after=before)
    shown = explorer.page.evaluate(LABELS_JS, GRAPH)
    assert not explorer.page.locator(f"{GRAPH} svg g.node.pvw-run").count()
    assert any(lines[0] == "matmul" for lines in shown.values()), shown  # read forward
    saved = tmp_path / "view.html"
    explorer.run(f"w.save({str(saved)!r})")

    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        blocked: list[str] = []
        route_local_only(context, blocked)
        page = context.new_page()
        page.goto(saved.as_uri())
        page.locator("[data-testid=pvw-root][data-state=ready]").wait_for(timeout=30_000)
        assert page.evaluate(LABELS_JS, GRAPH) == shown
        assert blocked == []
        save_screenshot(page, "saved_forward_unfolded")
    finally:
        context.close()
        explorer.run("w.view = 'backward'; w.fold = True")
