"""The side panel's tabs in a real JupyterLab (tests/browser/notebooks/panel_tabs.ipynb: a small
CNN trained 3 steps under trace(stats=True, steps=3), with a parameter whose gradient is all
zeros). Layers: the kernel's per-layer table, checked against parameter counts the notebook
takes from model.parameters(); Gradient flow: one bar per parameter whose values equal the
mean/max |grad| the notebook computes from p.grad; both linked to the graph's selection."""

from __future__ import annotations

import math
from typing import Any

import pytest
from contrast import CONTRAST_JS
from explorer_page import Explorer
from lab_page import save_screenshot
from playwright.sync_api import Locator

NOTEBOOK = "panel_tabs.ipynb"
RTOL = 1e-4

ROW_DATA_JS = "(els) => els.map((e) => ({ ...e.dataset, text: e.innerText }))"


def tab(explorer: Explorer, name: str) -> Locator:
    return explorer.page.get_by_test_id(f"pvw-tab-{name}")


def open_tab(explorer: Explorer, name: str) -> None:
    if tab(explorer, name).get_attribute("aria-selected") != "true":
        tab(explorer, name).click()
    assert tab(explorer, name).get_attribute("aria-selected") == "true"


def node_of_param(explorer: Explorer, name: str) -> str:
    nodes = "w.graph['nodes']"
    return explorer.value(
        f"next(n['id'] for n in {nodes} if n.get('param', {{}}).get('name') == {name!r})"
    )


def group_of_layer(explorer: Explorer, name: str) -> str:
    return explorer.value(f"next(g['id'] for g in w.graph['groups'] if g['name'] == {name!r})")


def layer_rows(explorer: Explorer) -> list[dict[str, Any]]:
    table = explorer.page.get_by_test_id("pvw-layers-table")
    table.wait_for(state="visible", timeout=15_000)  # the kernel's answer
    return table.locator("tr.pvw-layers-row").evaluate_all(ROW_DATA_JS)


def flow_rows(explorer: Explorer) -> list[dict[str, Any]]:
    rows = explorer.page.get_by_test_id("pvw-flow-rows")
    rows.wait_for(state="visible")
    return rows.locator(".pvw-flow-row").evaluate_all(ROW_DATA_JS)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=0.0)


def test_layers_tab_shows_the_kernels_table_with_the_models_parameter_counts(
    explorer: Explorer,
) -> None:
    explorer.run("w.selected = ''")
    open_tab(explorer, "layers")
    rows = layer_rows(explorer)
    expected = explorer.value("expected_params")  # from model.parameters(), per sublayer
    names = set()
    for row in rows:
        want = expected[""] if row["depth"] == "0" else expected[row["name"]]
        assert (int(row["params"]), int(row["trainable"])) == (want, want), row
        assert f"{want:,}" in row["text"].split("\t"), row["text"]  # what the page shows
        names.add(row["name"])
    assert {n for n, count in expected.items() if n and count > 0} <= names
    assert len(rows) == len(explorer.value("w.graph['groups']"))
    total = explorer.page.get_by_test_id("pvw-layers-total").inner_text()
    assert f"Total params: {expected['']:,} (trainable {expected['']:,})" in total
    # Indented by depth, in the kernel's order (summary.py's, which the pytest checks).
    assert [r["name"] for r in rows] == explorer.value("[r.name for r in w.summary().rows]")


def test_clicking_a_layer_row_selects_and_reveals_that_layer(explorer: Explorer) -> None:
    explorer.set_expanded("w.collapse_all()")
    open_tab(explorer, "layers")
    gid = group_of_layer(explorer, "features.3")
    row = explorer.page.locator("tr.pvw-layers-row[data-name='features.3']")
    explorer.redrawn(lambda: row.locator("button").click())  # `features` opens around it
    assert explorer.value("w.selected") == gid
    assert group_of_layer(explorer, "features") in explorer.value("w.expanded")
    assert "pvw-selected" in (explorer.element(f"pvw-{gid}").get_attribute("class") or "")
    assert "pvw-layers-selected" in (row.get_attribute("class") or "")
    assert row.get_attribute("aria-current") == "true"
    # The selection came from the tab: the tab stays.
    assert tab(explorer, "layers").get_attribute("aria-selected") == "true"
    assert not explorer.page.get_by_test_id("pvw-inspector").is_visible()


def test_gradient_flow_bars_equal_the_gradients_computed_from_p_grad(explorer: Explorer) -> None:
    explorer.run("w.selected = ''")
    open_tab(explorer, "flow")
    rows = flow_rows(explorer)
    expected = explorer.value("expected_flow")  # |p.grad| mean and max, after the last step
    assert sorted(r["param"] for r in rows) == sorted(expected)  # one bar per parameter
    # Forward order: the layers in the order they ran, `dead` (added at the end) last.
    layer_order = explorer.value("[n for n, _ in model.named_parameters() if n != 'dead']")
    assert [r["param"] for r in rows] == [*layer_order, "dead"]
    for row in rows:
        want = expected[row["param"]]
        if row["param"] == "dead":
            assert row["badge"] == "0 grad" and "0 grad" in row["text"]
            assert float(row["mean"]) == want["mean"] == 0.0 and float(row["max"]) == 0.0
            continue
        assert close(float(row["mean"]), want["mean"]), (row, want)
        assert close(float(row["max"]), want["max"]), (row, want)
        assert "badge" not in row
    assert explorer.page.get_by_test_id("pvw-flow-step").inner_text() == "step 2"
    # Each bar is drawn: the max bar is at least as long as the mean bar.
    row = explorer.page.locator(".pvw-flow-row[data-param='head.1.weight']")
    mean_w, max_w = (
        float(str(row.locator(f"rect.pvw-flow-{c}").get_attribute("width")).rstrip("%"))
        for c in ("mean", "max")
    )
    assert 0 < mean_w < max_w <= 100


def test_an_earlier_step_shows_the_norms_kept_for_it(explorer: Explorer) -> None:
    open_tab(explorer, "flow")
    slider = explorer.page.get_by_test_id("pvw-step")
    explorer.redrawn(lambda: slider.fill("0"))
    try:
        assert explorer.page.get_by_test_id("pvw-flow-step").inner_text() == "step 0"
        line = explorer.page.get_by_test_id("pvw-flow-line").inner_text()
        assert "only each gradient's L2 norm is kept" in line
        norms = explorer.value("norms[0]")  # ||p.grad|| after the first backward
        for row in flow_rows(explorer):
            assert "mean" not in row and "max" not in row  # not kept: absent, not guessed
            assert close(float(row["norm"]), norms[row["param"]]), (row, norms[row["param"]])
    finally:
        explorer.redrawn(lambda: slider.fill("2"))
    assert explorer.page.get_by_test_id("pvw-flow-step").inner_text() == "step 2"


def test_clicking_a_bar_selects_the_parameter_and_the_graph_selection_shows_the_inspector(
    explorer: Explorer,
) -> None:
    explorer.set_expanded("w.collapse_all()")
    open_tab(explorer, "flow")
    node = node_of_param(explorer, "features.0.weight")
    bar = explorer.page.locator(".pvw-flow-row[data-param='features.0.weight']")
    explorer.redrawn(bar.click)  # its layers open
    assert explorer.value("w.selected") == node
    assert "pvw-selected" in (explorer.element(f"pvw-{node}").get_attribute("class") or "")
    assert "pvw-flow-selected" in (bar.get_attribute("class") or "")
    assert tab(explorer, "flow").get_attribute("aria-selected") == "true"

    # A click in the graph is a selection from elsewhere: the inspector comes to the front.
    other = node_of_param(explorer, "features.0.bias")
    explorer.page.get_by_test_id("pvw-fit").click()  # the whole graph beside the panel
    explorer.page.wait_for_timeout(400)
    explorer.element(f"pvw-{other}").click()
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    assert explorer.value("w.selected") == other
    assert tab(explorer, "inspector").get_attribute("aria-selected") == "true"
    assert "features.0.bias" in inspector.inner_text()
    # ... and the flow tab highlights that parameter's bar when opened again.
    open_tab(explorer, "flow")
    selected = explorer.page.locator(".pvw-flow-row.pvw-flow-selected")
    assert selected.count() == 1 and selected.get_attribute("data-param") == "features.0.bias"


def test_tabs_work_from_the_keyboard_and_close(explorer: Explorer) -> None:
    explorer.run("w.selected = ''")
    open_tab(explorer, "layers")
    tab(explorer, "layers").focus()
    explorer.page.keyboard.press("ArrowDown")
    assert tab(explorer, "flow").get_attribute("aria-selected") == "true"
    assert explorer.page.evaluate("document.activeElement.dataset.testid") == "pvw-tab-flow"
    explorer.page.keyboard.press("Home")
    # The inspector with nothing selected: a graph with statistics shows its overview.
    assert tab(explorer, "inspector").get_attribute("aria-selected") == "true"
    explorer.page.get_by_test_id("pvw-inspector").wait_for(state="visible")
    explorer.page.keyboard.press("End")
    assert explorer.page.get_by_test_id("pvw-pane-flow").is_visible()
    explorer.page.get_by_test_id("pvw-close-flow").click()
    assert not explorer.page.get_by_test_id("pvw-pane-flow").is_visible()
    assert tab(explorer, "flow").get_attribute("aria-selected") == "false"


@pytest.mark.parametrize("theme", ["JupyterLab Dark", "JupyterLab Light"])
def test_tab_and_badge_text_is_readable_in_both_themes(explorer: Explorer, theme: str) -> None:
    explorer.set_theme(theme)
    open_tab(explorer, "flow")
    for el in (
        tab(explorer, "flow"),
        tab(explorer, "layers"),
        explorer.page.locator(".pvw-flow-row[data-param='dead'] .pvw-flow-mark"),
        explorer.page.locator(".pvw-flow-row[data-param='head.1.weight'] .pvw-flow-name"),
    ):
        assert el.evaluate(CONTRAST_JS) >= 4.5, (theme, el)


def test_screenshot(explorer: Explorer) -> None:
    explorer.set_expanded("w.expand_all()")
    explorer.run(f"w.selected = {node_of_param(explorer, 'head.1.weight')!r}")
    open_tab(explorer, "flow")
    explorer.page.get_by_test_id("pvw-fit").click()
    explorer.page.wait_for_timeout(600)
    assert save_screenshot(explorer.root, "panel_tabs_flow").stat().st_size > 10_000
    open_tab(explorer, "layers")
    layer_rows(explorer)
    explorer.page.wait_for_timeout(400)
    assert save_screenshot(explorer.root, "panel_tabs_layers").stat().st_size > 10_000
