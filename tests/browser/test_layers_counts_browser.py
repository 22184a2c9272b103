"""The Layers tab of a saved page counts the parameters the graph has no node for: a frozen
weight in its layer's row and the totals, with no "counting the parameters in this graph"
qualifier once the document names every one (it read "Params 3" for a frozen Linear(5, 3)).
Oracle: the model's own parameters' element counts."""

from __future__ import annotations

import math
from pathlib import Path

import paddle
from test_standalone_browser import ROWS_JS, saved_page

from paddleviz_widget import build_graph, trace
from paddleviz_widget.export.standalone import standalone_html


class PartlyFrozen(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.a = paddle.nn.Linear(4, 5)
        self.head = paddle.nn.Linear(5, 3)
        self.head.weight.stop_gradient = True

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.head(self.a(x))


def test_a_frozen_weight_counts_in_the_saved_pages_layers_tab(chromium_browser, tmp_path: Path):
    paddle.seed(0)
    model = PartlyFrozen()
    with trace(model, stats=True):
        y = model(paddle.randn([2, 4]))
        y.sum().backward()
    path = tmp_path / "frozen.html"
    path.write_text(standalone_html(build_graph(y)), encoding="utf-8")
    every = sum(math.prod(p.shape) for p in model.parameters())
    trainable = sum(math.prod(p.shape) for p in model.parameters() if not p.stop_gradient)
    with saved_page(chromium_browser, path) as saved:
        page = saved.page
        page.get_by_test_id("pvw-tab-layers").click()
        total = page.get_by_test_id("pvw-layers-total")
        total.wait_for(state="visible", timeout=5_000)
        assert total.text_content() == f"Total params: {every:,} (trainable {trainable:,})."
        rows = page.locator("[data-testid=pvw-layers-table] tr.pvw-layers-row").evaluate_all(
            ROWS_JS
        )
        head = next(r for r in rows if r[0].strip() == "head")
        assert head[2:4] == ["18", "3"]  # Params, Trainable: the frozen 5x3 weight and the bias
