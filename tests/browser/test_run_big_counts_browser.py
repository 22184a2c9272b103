"""A saved run page (file://, Chromium) of a real watched run whose parameter's gradient holds
more NaN than float32 counts exactly (2**24 + 3): its Parameters table showed 16777220 NaN,
the page's every-step summaries being float32. Oracle: p.grad's NaN count, read by NumPy in
the loop."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import paddle
from playwright.sync_api import Browser
from run_page import RunView, saved_run_page

from paddleviz_widget import trace
from paddleviz_widget.runs import open_run
from paddleviz_widget.runs.view_page import save_run_html

N = (1 << 24) + 4  # one element finite, the rest NaN: 2**24 + 3 NaN (float32: 2**24 + 4)


class Wide(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.w = self.create_parameter([N])

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return (self.w * x).sum()


def test_the_parameters_table_shows_a_nan_count_past_2_to_the_24_exactly(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    model = Wide()
    x = paddle.full([N], float("nan"))
    x[1] = 1.0
    counts = []
    with trace(model, every=100, run_dir=tmp_path / "run"):
        # steps 0 and 1 fully captured (the step after an anomaly starts is); 2: its summary
        for _ in range(3):
            model(x).backward()
            counts.append(int(np.isnan(model.w.grad.numpy()).sum()))
            model.clear_gradients()
    assert counts[2] == N - 1
    page_file = save_run_html(open_run(tmp_path / "run"), tmp_path / "run.html")
    with saved_run_page(chromium_browser, page_file) as (page, root):
        view = RunView(page, root)
        view.click_cell(2, 0)
        view.wait_detail(2, "params")
        (row,) = view.summary_rows()
        assert row["param"] == "w"
        assert row["cells"][5:] == [str(counts[2]), "0"], row  # said 16777220
