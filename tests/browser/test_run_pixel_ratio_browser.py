"""The run explorer's canvases (the heatmap, the loss curve) follow the page's
devicePixelRatio: the window moved to a screen of another density, or the browser zoomed.
A change of ratio alone resizes no element, so nothing redrew them: their backing stores
kept the old ratio's pixels, stretched blurry on a denser screen (js/ui/pixel_ratio.ts).

A real watched run, its saved page (file://) in Chromium; the ratio changed as a screen
change does, through CDP's Emulation.setDeviceMetricsOverride. (Headless Chromium fires a
`resolution` media query's change on the rendering update a viewport change makes, not on a
ratio override alone: each override also moves the page's height by a pixel, which resizes
neither canvas's box, checked, so no ResizeObserver redraws them.) Oracle: each canvas's
backing size against its CSS size times the ratio set."""

from __future__ import annotations

from pathlib import Path

import paddle
from playwright.sync_api import Browser
from run_page import TIMEOUT_MS, saved_run_page

from paddleviz_widget import trace
from paddleviz_widget.runs import open_run
from paddleviz_widget.runs.view_page import save_run_html

CANVASES = ("pvw-run-heatmap", "pvw-run-loss")
SIZES_JS = """(ids) => ids.map((id) => {
  const c = document.querySelector(`[data-testid=${id}]`);
  return [c.width, c.getBoundingClientRect().width, c.height, c.getBoundingClientRect().height];
})"""


def test_the_canvases_follow_the_pixel_ratio(chromium_browser: Browser, tmp_path: Path) -> None:
    paddle.seed(0)
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 1))
    with trace(net, stats=True, every=10, run_dir=tmp_path / "run"):
        for _ in range(30):
            (net(paddle.randn([2, 4])) ** 2).mean().backward()
    page_file = save_run_html(open_run(tmp_path / "run"), tmp_path / "run.html")
    with saved_run_page(chromium_browser, page_file) as (page, root):
        size = page.viewport_size
        assert size is not None
        cdp = page.context.new_cdp_session(page)
        page.wait_for_function(
            "(ids) => ids.every((id) => document.querySelector(`[data-testid=${id}]`)?.width > 0)",
            arg=list(CANVASES),
            timeout=TIMEOUT_MS,
        )
        boxes = [(css_w, css_h) for _, css_w, _, css_h in page.evaluate(SIZES_JS, list(CANVASES))]
        for n, ratio in enumerate((2, 1.5, 1, 3)):
            cdp.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": size["width"], "height": size["height"] + n % 2 + 1,
                 "deviceScaleFactor": ratio, "mobile": False},
            )  # fmt: skip
            assert page.evaluate("devicePixelRatio") == ratio
            page.wait_for_function(
                """([ids, ratio]) => ids.every((id) => {
                  const c = document.querySelector(`[data-testid=${id}]`);
                  return Math.abs(c.width - c.getBoundingClientRect().width * ratio) <= 1;
                })""",
                arg=[list(CANVASES), ratio],
                timeout=10_000,
            )
            sizes = page.evaluate(SIZES_JS, list(CANVASES))
            assert [(css_w, css_h) for _, css_w, _, css_h in sizes] == boxes  # no box resized
            for width, css_width, height, css_height in sizes:
                assert css_width > 100 and css_height > 20
                assert abs(width - css_width * ratio) <= 1
                assert abs(height - css_height * ratio) <= 1
        assert root.is_visible()
