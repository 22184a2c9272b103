"""Layer names a user chose in emoji and CJK, longer than the heatmap's name column, on the
saved run page (``view -o``) of a real watched run, opened from file:// offline in Chromium.

The column clips a long name from the left ("…" and its end, which keeps the layer's index).
It cut UTF-16 code units: an emoji (two units) cut in half left a lone surrogate at the front,
drawn as a replacement box, and a ZWJ sequence left its joiner. The oracle is the model's own
``named_sublayers``: every clipped name drawn is "…" and the end of one of them, whole
characters only. Its graph's search finds a name written with a combining accent from the
composed letter a keyboard types (it matched code points, so "no match")."""

from __future__ import annotations

import re
from pathlib import Path

import paddle
from local_only import route_local_only
from playwright.sync_api import Browser
from run_page import RUN_ROOT, TIMEOUT_MS, RunView

from paddleviz_widget import trace
from paddleviz_widget.runs import open_run
from paddleviz_widget.runs.view_page import save_run_html

# Long enough to be clipped at any font size the column uses; odd counts of 2-unit emoji so
# that a cut by code units lands in one of them at some width.
NAMES = [
    "编码器_" + "🔥" * 31,
    "🧪" * 27 + "_投影",
    "👩‍👩‍👧" * 9 + "_注意力",
    "e\u0301" * 41 + "_accent",
]
# Every string the page draws on a canvas, as drawn.
RECORD_JS = """() => {
  window.__drawn = [];
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    window.__drawn.push(String(text));
    return fill.call(this, text, ...rest);
  };
}"""
LONE_SURROGATE = re.compile(
    r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]"
)
# What a drawn string must not start with: a mark or joiner left of the character it joins.
DANGLING = re.compile(r"^[\u0300-\u036f\u200d\ufe0f]")


class Named(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        for name in NAMES:
            self.add_sublayer(name, paddle.nn.Linear(4, 4))

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for layer in self.children():
            x = layer(x)
        return x


def test_long_emoji_and_cjk_layer_names_are_clipped_by_whole_characters(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    paddle.seed(0)
    model = Named()
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    with trace(model, stats=True, every=2, run_dir=tmp_path / "run"):
        for _ in range(4):
            model(paddle.randn([2, 4])).sum().backward()
            opt.step()
            opt.clear_grad()
    layers = [name for name, _ in model.named_sublayers()]
    assert layers == NAMES  # Paddle kept the names as given
    page_file = save_run_html(open_run(tmp_path / "run"), tmp_path / "run.html")

    context = chromium_browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    blocked: list[str] = []
    route_local_only(context, blocked)
    page.add_init_script(f"({RECORD_JS})()")
    try:
        page.goto(page_file.as_uri())
        view = RunView(page, page.locator(RUN_ROOT))
        view.root.wait_for(timeout=TIMEOUT_MS)
        page.wait_for_function(
            "(n) => window.__drawn.filter((t) => t.startsWith('\u2026')).length >= n",
            arg=len(NAMES), timeout=TIMEOUT_MS,
        )  # fmt: skip
        clipped = sorted({t for t in page.evaluate("() => window.__drawn") if t.startswith("…")})
        broken = [t for t in clipped if LONE_SURROGATE.search(t) or DANGLING.search(t[1:])]
        assert not broken, [ascii(t) for t in broken]
        assert all(any(n.endswith(t[1:]) for n in NAMES) for t in clipped), clipped
        # Each long name drawn clipped, keeping its own end.
        assert {next(n for n in NAMES if n.endswith(t[1:])) for t in clipped} == set(NAMES)

        # The captured step's graph: its search finds the accented layer from the composed
        # "é" a keyboard types (the name holds "e" + U+0301), and the full-width-free CJK.
        page.wait_for_function(
            "(root) => root.dataset.detail === 'graph'", arg=view.root.element_handle(),
            timeout=TIMEOUT_MS,
        )  # fmt: skip
        view.graph_ready()
        search = view.root.get_by_test_id("pvw-search")
        count = view.root.get_by_test_id("pvw-search-count")
        for query in ("\u00e9\u00e9\u00e9_accent", "\u00c9\u00c9", "注意力"):
            search.fill(query)
            page.wait_for_function(
                "(el) => /^1\\/\\d+$/.test(el.textContent)", arg=count.element_handle(),
                timeout=TIMEOUT_MS,
            )  # fmt: skip
        assert not blocked, blocked
    finally:
        context.close()
