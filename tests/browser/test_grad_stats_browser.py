"""Gradient statistics in a real JupyterLab (tests/browser/notebooks/grad_stats.ipynb: a LeNet
trained 5 steps under trace(stats=True, steps=5), a NaN born in a Gate's sqrt on the last step,
a dead parameter): the |grad| colour legend and ramp, the red NaN edge and red collapsed layer,
the jump to the first NaN/Inf, the step slider, the dead parameter's badge, the overview."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explorer_page import GRAPH, Explorer, hover_edge
from lab_page import save_screenshot

HERE = Path(__file__).resolve().parent
DOCS_SCREENSHOTS = HERE.parents[1] / "docs" / "screenshots"
NOTEBOOK = "grad_stats.ipynb"
RED = "#d62728"
RED_RGB = "rgb(214, 39, 40)"

# The stroke each coloured edge's path is drawn with, by element id (computed, so as rgb():
# d3-graphviz's transitions rewrite Graphviz's "#rrggbb" that way).
EDGE_STROKES_JS = """(sel) => Object.fromEntries(
  [...document.querySelectorAll(`${sel} svg g.edge.pvw-graded`)]
    .map((g) => [g.id, getComputedStyle(g.querySelector("path")).stroke]))"""


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def strokes(explorer: Explorer) -> dict[str, str]:
    return explorer.page.evaluate(EDGE_STROKES_JS, GRAPH)


def nan_edges(graph: dict[str, Any]) -> list[str]:
    return [
        e["id"]
        for e in graph["edges"]
        if e.get("stats") and e["stats"]["nan"] + e["stats"]["inf"] > 0
    ]


def test_edges_take_the_legend_colours_and_the_nan_layer_is_red(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    legend = explorer.page.get_by_test_id("pvw-grad-legend")
    legend.wait_for(state="visible")
    assert explorer.page.get_by_test_id("pvw-colour-grad").is_checked()
    colours = legend.locator("[data-colour]").evaluate_all(
        "(els) => els.map((e) => e.dataset.colour)"
    )
    assert len(colours) == 8 and RED in colours  # 6 ramp stops, zero grey, NaN/Inf red
    assert "NaN/Inf" in legend.inner_text()

    explorer.set_expanded("w.collapse_all()")
    shown = strokes(explorer)
    assert shown and set(shown.values()) <= {rgb(c) for c in colours}, shown
    # The Gate layer, where the NaN was born, is red while collapsed.
    bad = explorer.page.locator(f"{GRAPH} svg g.node.pvw-nonfinite")
    assert bad.count() == 1
    assert "head" in (bad.text_content() or "")

    explorer.set_expanded("w.expand_all()")
    shown = strokes(explorer)
    assert len(set(shown.values())) >= 4, "a trained LeNet's norms should span the ramp"
    for eid in nan_edges(graph):
        assert shown[f"pvw-{eid}"] == RED_RGB  # and the page's CSS does not grey it over


def test_the_dead_parameter_has_its_badge(explorer: Explorer, graph: dict[str, Any]) -> None:
    explorer.set_expanded("w.expand_all()")
    (dead,) = [n for n in graph["nodes"] if n.get("grad_status")]
    node = explorer.element(f"pvw-{dead['id']}")
    assert "pvw-badge" in (node.get_attribute("class") or "")
    assert "0 grad" in (node.text_content() or "")
    assert node.locator("ellipse").evaluate("(e) => getComputedStyle(e).strokeDasharray") != "none"


def test_with_nothing_selected_the_inspector_lists_extreme_gradients(explorer: Explorer) -> None:
    explorer.run("w.selected = ''")
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    inspector.wait_for(state="visible")
    text = inspector.inner_text().lower()
    assert "largest" in text and "smallest" in text and "first nan/inf" in text
    assert inspector.locator(".pvw-link").count() >= 20


def test_jump_selects_the_first_nonfinite_node(explorer: Explorer, graph: dict[str, Any]) -> None:
    first = graph["meta"]["first_nonfinite"]
    explorer.set_expanded("w.collapse_all()")
    before = explorer.renders()
    explorer.page.get_by_test_id("pvw-jump-nonfinite").click()
    explorer.wait_ready(after=before)  # its layer opens
    assert explorer.value("w.selected") == first
    assert "pvw-selected" in (explorer.element(f"pvw-{first}").get_attribute("class") or "")
    # Its path to the loss is highlighted (upstream in the backward graph).
    assert explorer.page.locator(f"{GRAPH} svg g.edge.pvw-upstream").count() >= 1
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    text = inspector.inner_text()
    assert "SqrtGradNode" in text
    assert "First NaN/Inf".lower() in text.lower() and "the backward" in text
    assert "stats_models.py:" in text  # the forward call site
    assert "NaN" in text and "\u2016g\u2016" in text  # the statistics of what it sent


def test_the_step_slider_recolours_and_the_inspector_draws_a_sparkline(
    explorer: Explorer, graph: dict[str, Any]
) -> None:
    explorer.set_expanded("w.expand_all()")
    explorer.run("w.selected = ''")
    nan = nan_edges(graph)[0]
    assert strokes(explorer)[f"pvw-{nan}"] == RED_RGB
    slider = explorer.page.get_by_test_id("pvw-step")
    assert slider.input_value() == "4"
    explorer.redrawn(lambda: slider.fill("0"))
    assert explorer.page.get_by_test_id("pvw-step-text").inner_text() == "0"
    at_first = strokes(explorer)
    assert at_first[f"pvw-{nan}"] != RED_RGB  # step 0 had no NaN
    assert explorer.page.locator(f"{GRAPH} svg g.node.pvw-nonfinite").count() == 0
    # Its tooltip gives step 0's norm (what its colour shows) first, then step 4's with NaN.
    explorer.page.get_by_test_id("pvw-fit").click()  # the whole graph in view
    explorer.page.wait_for_timeout(400)
    hover_edge(explorer, f"pvw-{nan}")
    tip = explorer.page.get_by_test_id("pvw-tooltip").inner_text().split("\n")
    step0 = f"{graph['meta']['steps']['norm'][nan][0]:.1e}".replace("e-0", "e-")  # JS's 3.0e-1
    assert f"step 0: \u2016g\u2016 {step0}" in tip, tip
    assert any(line.startswith("step 4: ") and "NaN" in line for line in tip), tip
    explorer.page.mouse.move(0, 0)
    explorer.redrawn(lambda: slider.fill("4"))
    assert strokes(explorer)[f"pvw-{nan}"] == RED_RGB

    explorer.run(f"w.selected = '{nan}'")
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    spark = inspector.get_by_test_id("pvw-sparkline")
    spark.wait_for(state="visible")
    assert spark.locator("circle").count() == 5
    assert "NaN/Inf" in inspector.inner_text()


# WCAG contrast of each coloured edge's stroke against the widget's background, and the
# legend swatches' colours (computed: a dark theme redraws both).
DARK_JS = """(sel) => {
  const probe = document.createElement("canvas").getContext("2d");
  const rgb = (css) => {
    probe.fillStyle = "#000"; probe.fillStyle = css; probe.fillRect(0, 0, 1, 1);
    return Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3)); };
  const lum = (c) => { const [r, g, b] = rgb(c).map((v) => (v /= 255) <= 0.03928 ? v / 12.92
    : ((v + 0.055) / 1.055) ** 2.4); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const root = document.querySelector(sel).closest("[data-testid=pvw-root]");
  const bg = lum(getComputedStyle(root).backgroundColor);
  const edges = {};
  for (const g of document.querySelectorAll(`${sel} svg g.edge.pvw-graded`)) {
    const c = getComputedStyle(g.querySelector("path")).stroke, l = lum(c);
    edges[c] = (Math.max(l, bg) + 0.05) / (Math.min(l, bg) + 0.05);
  }
  const swatches = [...root.querySelectorAll("[data-testid=pvw-grad-legend] i")]
    .map((i) => getComputedStyle(i).backgroundColor);
  return { edges, swatches };
}"""


def test_in_both_themes_every_coloured_edge_stands_out(explorer: Explorer) -> None:
    """The ramp's darkest stop (#440154) was 1.2:1 against JupyterLab Dark's background: the
    smallest gradients' edges vanished; in the light theme its brightest (#fde725) was 1.3:1
    on white: the largest ones were the faintest. Each edge keeps a legend colour."""
    explorer.set_expanded("w.expand_all()")
    light = explorer.page.evaluate(DARK_JS, GRAPH)
    assert len(light["edges"]) >= 5, light
    assert min(light["edges"].values()) >= 3, [k for k, v in light["edges"].items() if v < 3]
    assert set(light["edges"]) <= set(light["swatches"]), light
    try:
        explorer.set_theme("JupyterLab Dark")
        dark = explorer.page.evaluate(DARK_JS, GRAPH)
    finally:
        explorer.set_theme("JupyterLab Light")
    assert len(dark["edges"]) >= 5, dark
    assert min(dark["edges"].values()) >= 3, [k for k, v in dark["edges"].items() if v < 3]
    assert set(dark["edges"]) <= set(dark["swatches"]), dark


def test_screenshot(explorer: Explorer) -> None:
    # Nothing selected (the inspector lists the extreme gradients), left to right: the ramp
    # colours are easier to tell apart on a wide drawing. One level open: the 36 GradNodes
    # all open were drawn too small to read the NaN and the dead parameter's badge.
    explorer.set_expanded("w.depth = 1")
    explorer.run("w.selected = ''")
    explorer.redrawn(lambda: explorer.page.get_by_test_id("pvw-direction").select_option("LR"))
    explorer.page.get_by_test_id("pvw-fit").click()
    explorer.page.wait_for_timeout(600)
    shot = save_screenshot(explorer.root, "grad_stats", DOCS_SCREENSHOTS)
    assert shot.stat().st_size > 10_000
