"""The widget in a narrow output area (a split notebook, a small window): the side panel open
beside the graph must leave the graph part of the width, and its close button and tab strip
must stay inside the widget (tests/browser/notebooks/diff_fold.ipynb: its diff opens with the
inspector showing the differences)."""

from __future__ import annotations

import pytest
from explorer_page import Explorer
from lab_page import save_screenshot

NOTEBOOK = "diff_fold.ipynb"

# Boxes of the widget, its graph area, the inspector's close button and the tab strip.
BOXES_JS = """(root) => {
  const box = (el) => { const b = el.getBoundingClientRect();
    return { left: b.left, right: b.right, width: b.width }; };
  return {
    root: box(root),
    stage: box(root.querySelector('.pvw-stage')),
    close: box(root.querySelector('.pvw-inspector-close')),
    tabs: box(root.querySelector('[data-testid=pvw-tabs]')),
    // Buttons whose text runs out of their box (over the line below it).
    spilling: [...root.querySelectorAll('button')]
      .filter((b) => b.offsetParent && b.scrollHeight > b.clientHeight + 1)
      .map((b) => b.textContent),
  };
}"""


@pytest.mark.parametrize("width", [300, 420])
def test_a_narrow_widget_keeps_the_graph_and_the_panel_controls_in_view(
    explorer: Explorer, width: int
) -> None:
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    # The output area narrowed as a split view or a small window makes it.
    explorer.root.evaluate(f"(el) => {{ el.style.width = '{width}px'; }}")
    explorer.page.wait_for_timeout(500)
    boxes = explorer.root.evaluate(BOXES_JS)
    root, stage = boxes["root"], boxes["stage"]
    assert abs(root["width"] - width) < 2, boxes
    assert stage["width"] >= 0.35 * width, f"the graph area is {stage['width']} px of {width}"
    for part in ("close", "tabs"):
        assert root["left"] - 1 <= boxes[part]["left"], (part, boxes)
        assert boxes[part]["right"] <= root["right"] + 1, (part, boxes)
    assert boxes["spilling"] == [], boxes["spilling"]
    save_screenshot(explorer.root, f"narrow_{width}")
    explorer.root.evaluate("(el) => { el.style.width = ''; }")


# The right edge a header's text may reach (its content box), and its close button's left edge.
HEADERS_JS = """(root) => [...root.querySelectorAll('.pvw-inspector-header, .pvw-pane-header')]
  .filter((h) => h.offsetParent)
  .map((h) => {
    const box = h.getBoundingClientRect();
    const text = box.right - parseFloat(getComputedStyle(h).paddingRight);
    const close = h.querySelector('button').getBoundingClientRect();
    return { text, close: close.left };
  })"""


def test_a_long_title_never_runs_under_the_close_button(explorer: Explorer) -> None:
    # A title that wraps fills its lines up to the header's content edge: the close button
    # must start beyond it (it sat 1-2 px inside, over the end of a long edge's name).
    explorer.run("w.selected = ''")
    for tab in ("pvw-tab-inspector", "pvw-tab-layers", "pvw-tab-flow"):
        explorer.page.get_by_test_id(tab).click()
        explorer.page.wait_for_timeout(300)
        headers = explorer.root.evaluate(HEADERS_JS)
        assert headers, tab
        for h in headers:
            assert h["text"] <= h["close"], (tab, h)
    explorer.page.get_by_test_id("pvw-tab-inspector").click()


# The boxes of the Gradient flow axis' visible labels, left to right.
TICKS_JS = """(root) => [...root.querySelectorAll('.pvw-flow-tick')]
  .filter((t) => t.offsetParent)
  .map((t) => { const b = t.getBoundingClientRect();
    return { text: t.textContent, left: b.left, right: b.right }; })"""


@pytest.mark.parametrize("width", [520, 1300])
def test_the_gradient_flow_axis_labels_never_overlap(explorer: Explorer, width: int) -> None:
    explorer.root.evaluate(f"(el) => {{ el.style.width = '{width}px'; }}")
    try:
        explorer.page.get_by_test_id("pvw-tab-flow").click()
        explorer.page.get_by_test_id("pvw-flow-rows").wait_for()
        explorer.page.wait_for_timeout(500)
        ticks = explorer.root.evaluate(TICKS_JS)
        assert len(ticks) >= 2, ticks
        for a, b in zip(ticks, ticks[1:]):
            assert a["right"] + 2 <= b["left"], (width, ticks)
        save_screenshot(explorer.root, f"flow_{width}")
    finally:
        explorer.page.get_by_test_id("pvw-tab-inspector").click()
        explorer.root.evaluate("(el) => { el.style.width = ''; }")
