"""A diff of two graphs in a real JupyterLab (tests/browser/notebooks/diff.ipynb: v1 of a small
model has hidden width 16 and a ``skip`` branch, v2 width 32 and a ``gate`` branch instead).
The test knows what it changed: gate's parameters are added, skip's removed, fc1's and fc2's
weights changed in shape, fc2's bias the same. It checks the marks in the drawing, the counts
on collapsed layers, the inspector for a clicked node and the summary, and saves a screenshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explorer_page import GRAPH, SCREEN_CENTRE_JS, Explorer
from lab_page import save_screenshot

NOTEBOOK = "diff.ipynb"
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

# Per SVG element id: its classes and the computed stroke and dash of its outline.
OUTLINES_JS = """(sel) => Object.fromEntries([...document.querySelectorAll(`${sel} svg g.node`)]
  .map((g) => {
    const shape = g.querySelector("polygon, ellipse, path");
    const style = getComputedStyle(shape);
    const cls = g.getAttribute("class");
    return [g.id, { cls, stroke: style.stroke, dash: style.strokeDasharray }];
  }))"""


def param_id(graph: dict[str, Any], name: str) -> str:
    (node,) = [n for n in graph["nodes"] if (n.get("param") or {}).get("name") == name]
    return f"pvw-{node['id']}"


def selected_becomes(explorer: Explorer, wanted: str) -> None:
    """Wait until the kernel has the page's selection (it syncs a message later)."""
    for _ in range(100):
        if explorer.value("w.selected") == wanted:
            return
        explorer.page.wait_for_timeout(50)
    assert explorer.value("w.selected") == wanted


def test_the_drawing_marks_added_removed_and_changed(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    explorer.set_expanded("w.expand_all()")
    outlines = explorer.page.evaluate(OUTLINES_JS, GRAPH)
    added = [outlines[param_id(graph, p)] for p in ("gate.weight", "gate.bias")]
    removed = [outlines[param_id(graph, p)] for p in ("skip.weight", "skip.bias")]
    changed = [outlines[param_id(graph, p)] for p in ("fc1.weight", "fc1.bias", "fc2.weight")]
    same = outlines[param_id(graph, "fc2.bias")]
    assert all("pvw-diff-added" in o["cls"] for o in added)
    assert all("pvw-diff-removed" in o["cls"] and o["dash"] != "none" for o in removed)
    assert all("pvw-diff-changed" in o["cls"] for o in changed)
    assert "pvw-diff" not in same["cls"]
    # Three colours, none of them the unmarked outline's.
    colours = {added[0]["stroke"], removed[0]["stroke"], changed[0]["stroke"], same["stroke"]}
    assert len(colours) == 4, colours
    edges = explorer.page.locator(f"{GRAPH} svg g.edge")
    for status in ("added", "removed", "changed"):
        assert edges.locator(f"xpath=self::*[contains(@class, 'pvw-diff-{status}')]").count() > 0
    legend = explorer.page.get_by_test_id("pvw-diff-legend")
    assert legend.inner_text().split() == ["added", "removed", "changed"]
    # The status line's button counts nodes and edges, as the kernel's summary does.
    counts = explorer.value("w.summary()['counts']")
    total = {k: v["nodes"] + v["edges"] for k, v in counts.items()}
    button = explorer.page.get_by_test_id("pvw-diff-summary")
    wanted = f"v1 \u2192 v2: +{total['added']} \u2212{total['removed']} ~{total['changed']}"
    assert button.inner_text() == wanted
    save_screenshot(explorer.root, "diff_expanded")
    save_screenshot(explorer.root, "diff", DOCS_SCREENSHOTS)  # README's picture


def test_a_collapsed_layer_shows_the_differences_it_holds(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    explorer.set_expanded("w.collapse_all()")
    groups = {g["name"]: g["id"] for g in graph["groups"]}
    skip = explorer.element(f"pvw-{groups['skip']}")
    gate = explorer.element(f"pvw-{groups['gate']}")
    fc2 = explorer.element(f"pvw-{groups['fc2']}")
    # skip: 2 ops and 2 params removed, and the 3 gradients they send; gate: the same, added.
    assert "\u0394 \u22127" in (skip.text_content() or "")
    assert "\u0394 +7" in (gate.text_content() or "")
    # fc2: its matmul and weight changed, and the two gradients the matmul sends.
    assert "\u0394 ~4" in (fc2.text_content() or "")
    for el, status in ((skip, "removed"), (gate, "added"), (fc2, "changed")):
        assert {"pvw-diff-holds", f"pvw-diff-{status}"} <= set(
            (el.get_attribute("class") or "").split()
        )
    save_screenshot(explorer.root, "diff_collapsed")


def test_clicking_a_changed_node_shows_what_changed(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    explorer.set_expanded("w.expand_all()")
    dom_id = param_id(graph, "fc1.weight")
    x, y = explorer.page.evaluate(SCREEN_CENTRE_JS, dom_id)
    explorer.page.mouse.click(x, y)
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    section = inspector.locator("section", has_text="Difference v1 \u2192 v2")
    text = section.inner_text()
    assert "changed from v1 to v2" in text
    assert "param shape" in text and "[8, 16] \u2192 [8, 32]" in text
    selected_becomes(explorer, dom_id.removeprefix("pvw-"))
    save_screenshot(explorer.root, "diff_inspector")


def test_the_summary_lists_the_differences_and_an_entry_selects_its_node(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    explorer.run("w.selected = 'n0'")  # something selected: the button clears it
    explorer.page.get_by_test_id("pvw-diff-summary").click()
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.locator("text=Differences v1 \u2192 v2").wait_for()
    selected_becomes(explorer, "")
    removed = inspector.locator("section", has_text="Removed (8)")
    refs = removed.locator("[data-ref]").evaluate_all("(els) => els.map((e) => e.dataset.ref)")
    expected = [e["id"] for e in explorer.value("w.summary()['removed']")]
    assert refs == expected
    # An edge into another layer names that layer: the output Add's gradients into skip's and
    # gate's Adds both read "Net · Add → Add" before, one removed, one added.
    texts = inspector.locator("[data-ref]").all_inner_texts()
    for layer in ("skip", "gate"):
        assert f"Net \u00b7 Add \u2192 {layer} \u00b7 Add" in texts, texts
    target = param_id(graph, "skip.weight").removeprefix("pvw-")
    removed.locator(f"[data-ref='{target}']").click()
    selected_becomes(explorer, target)
    assert "only in v1 (removed)" in inspector.inner_text()
