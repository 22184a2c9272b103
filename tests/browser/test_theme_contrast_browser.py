"""Text the gradient statistics draw red, and the reading toggle's pressed half, readable in
JupyterLab Light, Dark and Dark High Contrast (notebook tests/browser/notebooks/grad_stats.ipynb:
a LeNet trained with stats, a NaN made in its last step and a parameter that got 0 grad).

Before the fix (js/widget.css): the red labels inside the nodes ("⚠ NaN/Inf made here",
"0 grad") were raw #d62728 on the node's red-tinted or green fill, 3.1-3.5:1 in Light and
Dark; the Jump to first NaN/Inf button 3.8:1 on Dark's toolbar; and on Dark High Contrast the
pressed Backward button was white on its light blue accent, 3.0:1. WCAG AA asks 4.5:1 for
text this size."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from contrast import CONTRAST_JS
from explorer_page import GRAPH, Explorer, explorer_page
from lab_server import LabServer
from playwright.sync_api import Browser

NOTEBOOK = "grad_stats.ipynb"
THEMES = ["JupyterLab Light", "JupyterLab Dark", "JupyterLab Dark High Contrast"]
# Per red node label (a badged or problem node's last text line): its text, and the WCAG
# contrast of its fill against the fill of the node's own shape, both as computed.
RED_LABELS_JS = """(graph) => {
  const probe = document.createElement("canvas").getContext("2d");
  const rgb = (css) => {
    probe.clearRect(0, 0, 1, 1);
    probe.fillStyle = "#000";
    probe.fillStyle = css;
    probe.fillRect(0, 0, 1, 1);
    return Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3));
  };
  const lum = ([r, g, b]) => {
    const f = (c) => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const nodes = document.querySelectorAll(
    `${graph} svg g.node.pvw-badge, ${graph} svg g.node.pvw-problem`);
  return [...nodes].map((g) => {
    const texts = g.querySelectorAll("text");
    const text = texts[texts.length - 1];
    const shape = g.querySelector("ellipse, polygon, path");
    const [a, b] = [lum(rgb(getComputedStyle(text).fill)), lum(rgb(getComputedStyle(shape).fill))];
    return [text.textContent, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)];
  });
}"""


@pytest.fixture(scope="module")
def lab(chromium_browser: Browser, lab_server: LabServer) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as explorer:
        yield explorer
        explorer.set_theme("JupyterLab Light")


@pytest.mark.parametrize("theme", THEMES)
def test_red_text_and_the_pressed_toggle_are_readable(lab: Explorer, theme: str) -> None:
    lab.set_theme(theme)
    labels = lab.page.evaluate(RED_LABELS_JS, GRAPH)
    said = " ".join(text for text, _ in labels)
    assert "NaN/Inf" in said and "0 grad" in said, labels  # the problems this model has
    low = [(text, round(ratio, 2)) for text, ratio in labels if ratio < 4.5]
    assert not low, (theme, low)
    for testid in ("pvw-jump-nonfinite", "pvw-reading-backward"):
        el = lab.page.get_by_test_id(testid)
        assert el.is_visible(), testid
        assert el.evaluate(CONTRAST_JS) >= 4.5, (theme, testid, el.evaluate(CONTRAST_JS))
