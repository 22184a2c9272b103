"""A diff of two training steps of a model with repeated blocks, in a real JupyterLab
(tests/browser/notebooks/diff_fold.ipynb: four residual ``Block``s, traced with statistics at
two SGD steps). The blocks are drawn folded into one node; that node stands for everything in
them, so it must show the differences they hold, as a collapsed layer does (counted here from
the graph document's own marks), and its inspector must name every parameter in full."""

from __future__ import annotations

import re
from typing import Any

import pytest
from explorer_page import GRAPH, Explorer, hover_edge
from lab_page import save_screenshot

NOTEBOOK = "diff_fold.ipynb"

# Per inspector row: its key's text, and whether the key shows all of it.
KEYS_JS = """(el) => [...el.querySelectorAll('.pvw-key')].map((k) => ({
  text: k.textContent, clipped: k.scrollWidth > k.clientWidth + 1 }))"""


@pytest.fixture(scope="module")
def doc(explorer: Explorer) -> dict[str, Any]:
    """The widget's graph document as the kernel holds it (schema 2.3: marks on nodes and
    edges, groups by id with their parent)."""
    return explorer.value("w.graph")


def marks_inside(graph: dict[str, Any], prefix: str) -> dict[str, int]:
    """Diff marks on the nodes inside the layers named ``<prefix>.<k>`` and on the edges those
    nodes send, from the document's parent links (the count a collapsed layer shows)."""
    parent = {g["id"]: g.get("parent") for g in graph["groups"]}
    name = {g["id"]: g["name"] for g in graph["groups"]}
    member = re.compile(rf"^{re.escape(prefix)}\.\d+$")

    def inside(gid: str | None) -> bool:
        while gid is not None:
            if member.match(name[gid]):
                return True
            gid = parent.get(gid)
        return False

    nodes = {n["id"] for n in graph["nodes"] if inside(n.get("group"))}
    tally = {"added": 0, "removed": 0, "changed": 0}
    for n in graph["nodes"]:
        if n["id"] in nodes and n.get("diff"):
            tally[n["diff"]["status"]] += 1
    for e in graph["edges"]:
        if e["source"] in nodes and e.get("diff"):
            tally[e["diff"]["status"]] += 1
    return tally


def test_a_folded_run_shows_the_differences_its_blocks_hold(
    explorer: Explorer, doc: dict[str, Any]
) -> None:
    run = explorer.page.locator(f"{GRAPH} svg g.node.pvw-run")
    assert run.count() == 1
    assert "blocks.0\u20133 \u00b7 Block \u00d74" in (run.text_content() or "")
    tally = marks_inside(doc, "blocks")
    assert tally["changed"] > 0 and tally["added"] == tally["removed"] == 0, tally
    assert f"\u0394 ~{tally['changed']}" in (run.text_content() or "")
    assert {"pvw-diff-holds", "pvw-diff-changed"} <= set((run.get_attribute("class") or "").split())
    save_screenshot(explorer.root, "diff_fold")


def test_the_inspector_names_a_blocks_parameters_in_full(
    explorer: Explorer, doc: dict[str, Any]
) -> None:
    groups = {g["name"]: g["id"] for g in doc["groups"]}
    explorer.run(f"w.selected = '{groups['blocks.2']}'")
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    key = inspector.locator(".pvw-key", has_text="blocks.2.fc.weight")
    key.wait_for()
    key.scroll_into_view_if_needed()
    keys = inspector.evaluate(KEYS_JS)
    clipped = [k["text"] for k in keys if k["clipped"]]
    assert not clipped, f"inspector keys cut off: {clipped}"
    save_screenshot(explorer.root, "diff_fold_inspector")


# Per changed edge: the computed stroke of its line, and the diff colour the page defines.
CHANGED_STROKES_JS = """(sel) => {
  const want = document.createElement('div');
  document.querySelector(sel).append(want);
  want.style.color = 'var(--pvw-diff-changed)';
  const colour = getComputedStyle(want).color;
  want.remove();
  const edges = [...document.querySelectorAll(`${sel} svg g.edge.pvw-diff-changed`)];
  return { colour, strokes: edges.map((g) =>
    getComputedStyle(g.querySelector('path:not(.pvw-hit)')).stroke) };
}"""


def test_changed_edges_keep_the_diff_colour_on_a_dark_theme(explorer: Explorer) -> None:
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            explorer.set_theme(theme)
            got = explorer.page.evaluate(CHANGED_STROKES_JS, GRAPH)
            assert got["strokes"], "no changed edge drawn"
            assert set(got["strokes"]) == {got["colour"]}, (theme, got)
        save_screenshot(explorer.root, "diff_fold_dark")
    finally:
        explorer.set_theme("JupyterLab Light")


ONE_CURRENT_JS = """(sel) =>
  document.querySelector('[data-testid=pvw-root]').dataset.state === 'ready' &&
  document.querySelectorAll(`${sel} svg .pvw-match-current`).length === 1"""


def test_enter_in_search_visits_every_block_once_with_a_steady_count(
    explorer: Explorer, doc: dict[str, Any]
) -> None:
    # Each block of the folded run holding a match is a stop, and each match outside; counted
    # from the document: "add" matches AddGradNode (its name, and the forward op `add`).
    parent = {g["id"]: g.get("parent") for g in doc["groups"]}
    name = {g["id"]: g["name"] for g in doc["groups"]}

    def block_of(gid: str | None) -> str | None:
        while gid is not None:
            if re.fullmatch(r"blocks\.\d+", name[gid]):
                return gid
            gid = parent.get(gid)
        return None

    adds = [n for n in doc["nodes"] if "add" in n["name"].lower()]
    blocks = {block_of(n.get("group")) for n in adds} - {None}
    outside = [n for n in adds if block_of(n.get("group")) is None]
    total = len(blocks) + len(outside)
    assert len(blocks) == 4 and outside
    search = explorer.page.get_by_test_id("pvw-search")
    count = explorer.page.get_by_test_id("pvw-search-count")
    current = explorer.page.locator(f"{GRAPH} svg .pvw-match-current")
    try:
        search.fill("add")
        search.press("Enter")  # the first Enter selects the first match; the next ones step on
        seen = []
        for step in range(total):
            if step:
                search.press("Enter")
            explorer.page.wait_for_function(
                """([sel, want]) => document.querySelector(sel).textContent === want""",
                arg=["[data-testid=pvw-search-count]", f"{step + 1}/{total}"],
                timeout=10_000,
            )
            # The redraw that unfolds (or folds back) a block, then one current match.
            explorer.page.wait_for_timeout(300)
            explorer.page.wait_for_function(ONE_CURRENT_JS, arg=GRAPH, timeout=10_000)
            assert count.inner_text() == f"{step + 1}/{total}"
            seen.append(current.get_attribute("id"))
        # Every block was current once, drawn on its own, and so was every match outside.
        assert len(set(seen)) == total, seen
        assert {f"pvw-{b}" for b in blocks} <= set(seen), seen
        search.press("Enter")
        explorer.page.wait_for_timeout(300)
        assert count.inner_text() == f"1/{total}"
    finally:
        search.fill("")


def test_an_edge_tooltip_says_its_statistics_are_of_abs_g(
    explorer: Explorer, doc: dict[str, Any]
) -> None:
    # dloss/dy out of the square (Pow -> Add): of both signs, so its mean is not its mean |g|
    # (0.125 against -0.08 at step 0): a bare "mean" named a number that is not the mean.
    explorer.run("w.selected = ''")
    explorer.page.get_by_test_id("pvw-fit").click()
    explorer.page.wait_for_timeout(400)
    (pow_node,) = [n["id"] for n in doc["nodes"] if n["name"].startswith("Pow")]
    (edge,) = [e for e in doc["edges"] if e["source"] == pow_node]
    hover_edge(explorer, f"pvw-{edge['id']}")
    tip = explorer.page.get_by_test_id("pvw-tooltip").inner_text()
    norm, max_abs, mean_abs = edge["stats"][:3]  # schema 2.3: norm, max |g|, mean |g|, ...
    line = next(t for t in tip.split("\n") if "\u2016g\u2016" in t)
    assert f"max |g| {max_abs:.1e}".replace("e-0", "e-").replace("e+0", "e+") in line, line
    assert f"mean |g| {mean_abs:.1e}".replace("e-0", "e-").replace("e+0", "e+") in line, line
    explorer.page.mouse.move(0, 0)


def test_a_run_hidden_in_a_collapsed_layer_offers_no_fold_again(
    explorer: Explorer, doc: dict[str, Any]
) -> None:
    # Selected from Python (or from the other view of a widget shown twice) while its layers
    # are collapsed: nothing of the run is drawn, so there is nothing to fold "again".
    groups = {g["name"]: g["id"] for g in doc["groups"]}
    explorer.set_expanded("w.collapse_all()")
    explorer.run(f"w.selected = '{groups['blocks.0']}..{groups['blocks.3']}'")
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.locator("text=blocks.0\u20133 \u00d74").first.wait_for()
    assert inspector.locator("[data-action=fold]").count() == 0, inspector.inner_text()
    explorer.run("w.selected = ''")


def test_next_difference_unfolds_the_run_that_hides_it(
    explorer: Explorer, doc: dict[str, Any]
) -> None:
    # The blocks start folded into one node: each › selects a difference and draws it (a
    # node itself, an edge both its ends: the run unfolded, its layer opened), never an
    # invisible one whose run or layer stands in for it.
    ends = {e["id"]: (e["source"], e["target"]) for e in doc["edges"]}
    explorer.run("w.selected = ''")
    explorer.set_expanded("w.collapse_all()")
    n = sum(c["nodes"] + c["edges"] for c in explorer.value("w.summary()['counts']").values())
    for k in range(1, 6):
        explorer.page.get_by_test_id("pvw-diff-next").click()
        explorer.page.locator("[data-testid=pvw-diff-where]", has_text=f"{k}/{n}").wait_for()
        shown = explorer.page.get_by_test_id("pvw-inspector").get_attribute("data-id") or ""
        drawn = [f"pvw-{x}" for x in ends.get(shown, (shown,))]
        explorer.page.wait_for_function(
            """([sel, ids]) => document.querySelector(sel).closest('[data-testid=pvw-root]')
                .dataset.state === 'ready'
                && ids.every((id) => document.querySelector(`${sel} svg [id="${id}"]`))""",
            arg=[GRAPH, drawn],
        )
