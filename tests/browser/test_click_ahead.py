"""A click that opens or closes a group draws a layout made ahead when it can (js/prefetch.ts,
js/layout/cache.ts), and no click is lost while a redraw animates.

The page's layout requests are counted where they leave for the worker (Worker.postMessage
with DOT text); what the drawing shows is checked against the payload's own account of the
visible nodes (tests/fixtures/graphs/payload.py), not against the widget's code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explorer_page import ROOT
from fixtures.graphs.payload import largest_partial_group, to_depth, visible_nodes
from models import traced_lenet_graph

from paddleviz_widget.export.standalone import standalone_html

VIEWPORT = {"width": 1300, "height": 860}
COUNT_LAYOUTS = """(() => {
  window.__pvwLayouts = [];
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    if (message && typeof message.dot === "string") window.__pvwLayouts.push(message.dot);
    return post.call(this, message, ...rest);
  };
})();"""
GRAPH_NODES = "[data-testid=pvw-graph] svg g.node"
# The pointer onto a node and off the drawing again, in one task (as the browser would send a
# fast pass: mousemove on it, then on the drawing's background).
PASS_OVER_JS = """(node) => {
  const box = node.getBoundingClientRect(), x = box.x + box.width / 2, y = box.y + box.height / 2;
  const move = (target, cx, cy) => target.dispatchEvent(
    new MouseEvent("mousemove", { bubbles: true, clientX: cx, clientY: cy }));
  move(node.querySelector("text") || node, x, y);
  move(node.closest("svg"), 2, 2);
}"""


def _shown(page: Any) -> set[str]:
    return set(
        page.evaluate(f"() => [...document.querySelectorAll('{GRAPH_NODES}')].map((g) => g.id)")
    )


def _layouts(page: Any) -> int:
    return int(page.evaluate("() => window.__pvwLayouts.length"))


def _settled(page: Any, renders: int) -> None:
    page.wait_for_function(
        "([sel, n]) => { const r = document.querySelector(sel);"
        " return r.dataset.drawState === 'idle' && Number(r.dataset.renders) > n; }",
        arg=[ROOT, renders],
        timeout=15_000,
    )


def _renders(page: Any) -> int:
    return int(page.locator(ROOT).get_attribute("data-renders") or 0)


def _open_page(browser: Any, tmp_path: Path, graph: dict[str, Any]) -> tuple[Any, Any, list[str]]:
    path = tmp_path / "lenet.html"
    path.write_text(standalone_html(graph, depth=0), encoding="utf-8")
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.add_init_script(COUNT_LAYOUTS)
    page.goto(path.as_uri())
    page.locator(f"{ROOT}[data-state=ready]").wait_for(timeout=20_000)
    page.wait_for_timeout(800)  # d3-graphviz takes the first drawing over after a frame
    return context, page, errors


def test_a_group_the_pointer_rests_on_is_laid_out_before_the_click(
    chromium_browser: Any, tmp_path: Path
) -> None:
    graph = traced_lenet_graph()
    context, page, errors = _open_page(chromium_browser, tmp_path, graph)
    try:
        closed = set(to_depth(graph, 0))
        group = largest_partial_group(graph)["id"]
        node = page.locator(f"[id='pvw-{group}']")

        # Passing over the group lays nothing out: the pointer on it, then off it, in one task
        # (two Playwright moves can be further apart than the rest's 60 ms on a loaded machine).
        before = _layouts(page)
        node.evaluate(PASS_OVER_JS)
        page.wait_for_timeout(400)
        assert _layouts(page) == before

        # Resting on it lays out the view a click would show; the click draws that layout.
        node.hover()
        page.wait_for_timeout(400)
        assert _layouts(page) == before + 1
        renders = _renders(page)
        node.click()
        opened = closed | {group}
        page.wait_for_function(
            "(id) => document.getElementById(id) !== null", arg=f"pvw-{group}-cluster"
        )
        _settled(page, renders)
        assert _shown(page) == {f"pvw-{n}" for n in visible_nodes(graph, opened)}
        assert _layouts(page) == before + 1, "the click laid its view out again"

        # Closing it again draws the layout kept from before, without asking Graphviz.
        renders = _renders(page)
        page.locator(f"[id='pvw-{group}-cluster'] text").first.click()
        _settled(page, renders)
        assert _shown(page) == {f"pvw-{n}" for n in visible_nodes(graph, closed)}
        assert _layouts(page) == before + 1
        assert errors == []
    finally:
        context.close()


def test_no_click_is_lost_while_a_redraw_animates(chromium_browser: Any, tmp_path: Path) -> None:
    graph = traced_lenet_graph()
    context, page, errors = _open_page(chromium_browser, tmp_path, graph)
    try:
        shown = _shown(page)
        groups = [g["id"] for g in graph["groups"] if f"pvw-{g['id']}" in shown][:2]
        assert len(groups) == 2, "LeNet at depth 0 shows two collapsed groups"
        renders = _renders(page)
        page.locator(f"[id='pvw-{groups[0]}']").click()
        # The second click lands while the first redraw is still animating (0.45 s).
        page.wait_for_function(
            "(id) => document.getElementById(id) !== null", arg=f"pvw-{groups[0]}-cluster"
        )
        page.locator(f"[id='pvw-{groups[1]}']").click(timeout=2_000)
        _settled(page, renders + 1)
        expanded = set(to_depth(graph, 0)) | set(groups)
        assert _shown(page) == {f"pvw-{n}" for n in visible_nodes(graph, expanded)}
        assert errors == []
    finally:
        context.close()
