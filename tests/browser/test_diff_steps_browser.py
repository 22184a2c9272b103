"""Walking every difference of a diff in a real JupyterLab (tests/browser/notebooks/
diff_steps.ipynb: 12 Linear layers in an nn.Sequential, each another width in v2, so every
layer changed). The overview used to list 8 entries per status and nothing stepped through
the rest; here it lists them all, the status line's ‹ › and the keys n / p step through each
one once, and the keys keep working after a click on a list entry. The oracle is the
kernel's own summary() of the diff."""

from __future__ import annotations

import pytest
from explorer_page import Explorer

NOTEBOOK = "diff_steps.ipynb"

WHERE = "[data-testid=pvw-diff-where]"
SHOWN_JS = """() => {
  const el = document.querySelector('[data-testid=pvw-inspector]');
  return el && !el.hidden ? el.dataset.id : null;
}"""


@pytest.fixture(scope="module")
def marked(explorer: Explorer) -> list[str]:
    """Every node and edge the kernel's summary() lists as a difference."""
    summary = explorer.value("w.summary()")
    return [e["id"] for s in ("added", "removed", "changed") for e in summary[s]]


def where(explorer: Explorer) -> str:
    return explorer.page.locator(WHERE).inner_text()


def press_until(explorer: Explorer, key: str, wanted: str) -> None:
    """Press ``key`` and wait for the status line to say ``wanted`` (JupyterLab 4.6 can drop
    the first key press after load: pressed once more if nothing moved)."""
    before = where(explorer)
    explorer.page.keyboard.press(key)
    try:
        explorer.page.locator(WHERE, has_text=wanted).wait_for(timeout=3000)
    except Exception:
        assert where(explorer) == before, (before, where(explorer))  # not a wrong step
        explorer.page.keyboard.press(key)
        explorer.page.locator(WHERE, has_text=wanted).wait_for(timeout=3000)
    assert where(explorer) == wanted


def test_the_overview_lists_every_difference(explorer: Explorer, marked: list[str]) -> None:
    explorer.page.get_by_test_id("pvw-diff-summary").click()
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    changed = explorer.value("w.summary()['changed']")
    assert len(changed) > 8 * 3  # what the old list could not show
    section = inspector.locator("section", has_text=f"Changed ({len(changed)})")
    refs = section.locator("[data-ref]").evaluate_all("(els) => els.map((e) => e.dataset.ref)")
    assert refs == [e["id"] for e in changed]
    assert where(explorer) == str(len(marked))


def test_next_and_previous_visit_every_difference_once(
    explorer: Explorer, marked: list[str]
) -> None:
    explorer.set_expanded("w.expand_all()")
    n = len(marked)
    explorer.page.get_by_test_id("pvw-diff-next").click()
    explorer.page.locator(WHERE, has_text=f"1/{n}").wait_for()
    seen = [explorer.page.evaluate(SHOWN_JS)]
    for k in range(2, n + 1):
        press_until(explorer, "n", f"{k}/{n}")
        seen.append(explorer.page.evaluate(SHOWN_JS))
    assert sorted(seen) == sorted(marked)  # each one once
    last = seen[-1]
    assert explorer.value_becomes("w.selected", last) == last
    press_until(explorer, "n", f"1/{n}")  # round to the first
    assert explorer.page.evaluate(SHOWN_JS) == seen[0]
    press_until(explorer, "p", f"{n}/{n}")  # and back
    explorer.page.get_by_test_id("pvw-diff-prev").click()
    explorer.page.locator(WHERE, has_text=f"{n - 1}/{n}").wait_for()
    assert explorer.page.evaluate(SHOWN_JS) == seen[-2]


def test_keys_step_on_from_a_clicked_entry_and_not_in_the_search_box(
    explorer: Explorer, marked: list[str]
) -> None:
    explorer.run("w.selected = ''")
    explorer.page.get_by_test_id("pvw-diff-summary").click()
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    entry = inspector.locator("[data-ref]").nth(10)
    ref = entry.get_attribute("data-ref")
    entry.click()
    explorer.page.wait_for_function(f"() => ({SHOWN_JS})() === {ref!r}")
    k = int(where(explorer).split("/")[0])
    # the clicked link was redrawn away; the focus stayed in the explorer, so n still steps
    assert explorer.page.evaluate(
        "() => document.activeElement.closest('[data-testid=pvw-root]') !== null"
    )
    press_until(explorer, "n", f"{k + 1}/{len(marked)}")
    assert explorer.page.evaluate(SHOWN_JS) != ref
    search = explorer.page.get_by_role("searchbox")
    if search.count() == 0:
        search = explorer.root.locator("input").first
    search.click()
    explorer.page.keyboard.type("np")
    explorer.page.wait_for_timeout(300)
    assert where(explorer) == f"{k + 1}/{len(marked)}"
    assert search.input_value() == "np"
    search.fill("")


INSERTED = """
from paddleviz_widget.graph.diff import diff_graphs
base = model([4] * 5)
grown = nn.Sequential(*list(base)[:2], nn.LayerNorm(4), *list(base)[2:])
w.selected = ""
w.graph = diff_graphs(graph(base), graph(grown), labels=("v1", "v2"))
"""


def test_a_layer_inserted_shows_where_the_later_ones_went(explorer: Explorer) -> None:
    # (last: it gives the widget another diff) four Linear layers, a LayerNorm put in at 2
    explorer.run(INSERTED)
    button = explorer.page.get_by_test_id("pvw-diff-summary")
    counts = explorer.value("w.summary()['counts']")
    total = sum(c["nodes"] + c["edges"] for c in counts.values())
    explorer.page.locator(WHERE, has_text=str(total)).wait_for()
    assert counts["removed"]["nodes"] == 0  # the gradient into "2" now goes into the new "2"
    button.click()
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    moved = inspector.locator("section", has_text="Moved (2)")
    rows = moved.locator(".pvw-value").all_inner_texts()
    assert rows == ["2 \u2192 3", "3 \u2192 4"]
    added = explorer.value("[e['layer'] for e in w.summary()['added'] if e['kind'] == 'node']")
    assert added == ["2", "2", "2"]
    # a node of b's layer "4" is a's "3"
    weight = explorer.value(
        "[n['id'] for n in w.graph['nodes'] if (n.get('param') or {}).get('name') == '4.weight']"
    )[0]
    explorer.run(f"w.selected = {weight!r}")
    section = inspector.locator("section", has_text="Difference v1 \u2192 v2")
    section.wait_for()
    assert (
        "in v1" in section.inner_text() and "3" in section.locator(".pvw-value").all_inner_texts()
    )
