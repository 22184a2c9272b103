"""An animated redraw that d3 never runs must not freeze the widget (js/draw_loop.ts watches it).

d3-graphviz starts an animated render from a d3 timer, which waits for an animation frame; in
JupyterLab that render sometimes never started (the first widget of a notebook stayed
"rendering" for good, and every later drawing queued behind it). Here the page's animation
frames are stopped on purpose just before a click that redraws with animation: the widget must
still show the new view, drawn without d3, and animate again once frames come back. Expected
nodes come from the payload (tests/fixtures/graphs/payload.py), not from the widget.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from explorer_page import ROOT
from fixtures.graphs.payload import largest_partial_group, to_depth, visible_nodes
from models import traced_lenet_graph

from paddleviz_widget.export.standalone import standalone_html

VIEWPORT = {"width": 1300, "height": 860}
# requestAnimationFrame that holds callbacks back while frames are stopped and runs them once
# they start again, as a page that renders no frames for a while does (d3-timer binds the
# function when the bundle loads: it must be in place before that).
NO_FRAMES = """(() => {
  const raf = window.requestAnimationFrame.bind(window);
  let held = [];
  window.__pvwFrames = (on) => {
    window.__pvwNoFrames = !on;
    if (on) for (const cb of held.splice(0)) raf(cb);
  };
  window.__pvwNoFrames = false;
  window.requestAnimationFrame = (cb) => (window.__pvwNoFrames ? (held.push(cb), 0) : raf(cb));
})();"""
STUCK_AFTER_S = 1.95  # js/render/timing.ts: STUCK_AFTER_MS
GRAPH_NODES = "[data-testid=pvw-graph] svg g.node"


def _shown(page: Any) -> set[str]:
    return set(
        page.evaluate(f"() => [...document.querySelectorAll('{GRAPH_NODES}')].map((g) => g.id)")
    )


def _redraw(page: Any, click: str) -> float:
    before = int(page.locator(ROOT).get_attribute("data-renders") or 0)
    start = time.perf_counter()
    page.locator(f"[id='{click}']").click()
    page.wait_for_function(
        "([sel, n]) => { const r = document.querySelector(sel);"
        " return r.dataset.state === 'ready' && Number(r.dataset.renders) > n; }",
        arg=[ROOT, before],
        timeout=15_000,
        polling=100,  # not per animation frame: frames may be stopped
    )
    return time.perf_counter() - start


def test_a_redraw_whose_animation_never_starts_is_drawn_anyway(
    chromium_browser: Any, tmp_path: Path
) -> None:
    graph = traced_lenet_graph()
    path = tmp_path / "lenet.html"
    path.write_text(standalone_html(graph, depth=0), encoding="utf-8")
    context = chromium_browser.new_context(viewport=VIEWPORT)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.add_init_script(NO_FRAMES)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(path.as_uri())
        page.locator(f"{ROOT}[data-state=ready]").wait_for(timeout=20_000)
        page.wait_for_timeout(800)  # d3-graphviz takes the first drawing over after a frame
        expanded = set(to_depth(graph, 0))

        group = largest_partial_group(graph)
        page.evaluate("() => window.__pvwFrames(false)")
        took = _redraw(page, f"pvw-{group['id']}")
        expanded.add(group["id"])
        assert _shown(page) == {f"pvw-{n}" for n in visible_nodes(graph, expanded)}
        assert took >= STUCK_AFTER_S * 0.9, f"drawn in {took:.2f} s: the animation did run"

        # Frames again: the next redraw animates through a fresh d3-graphviz, at its usual pace.
        page.evaluate("() => window.__pvwFrames(true)")
        page.wait_for_timeout(800)  # the held-back render runs, on the drawing given up
        closed = next(g["id"] for g in graph["groups"] if f"pvw-{g['id']}" in _shown(page))
        took = _redraw(page, f"pvw-{closed}")
        expanded.add(closed)
        assert _shown(page) == {f"pvw-{n}" for n in visible_nodes(graph, expanded)}
        assert took < STUCK_AFTER_S, f"the redraw after frames came back took {took:.2f} s"
        assert errors == []
    finally:
        context.close()
