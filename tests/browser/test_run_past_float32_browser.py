"""A saved run page (file://, Chromium) of a real watched float64 model whose gradient's norm
is finite but past float32's range (each element 1e200: the log stores float32, so inf): the
Parameters table said "Inf" for it, and the heatmap's tooltip "gradient norm Infinity", next
to a NaN/Inf count of 0, as if the gradient were infinite. Oracle: p.grad read by NumPy in the
loop (finite, its norm 6.4e201)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import paddle
from playwright.sync_api import Browser
from run_page import RunView, saved_run_page

from paddleviz_widget import trace
from paddleviz_widget.runs import open_run
from paddleviz_widget.runs.view_page import save_run_html


class Wide(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.w = self.create_parameter([4096], dtype="float64")

    def forward(self, scale: float) -> paddle.Tensor:
        return (self.w * scale).sum()


def test_a_norm_past_float32_reads_as_such_not_as_inf(chromium_browser: Browser, tmp_path: Path):
    model = Wide()
    with trace(model, every=100, run_dir=tmp_path / "run"):
        for scale in (1.0, 1e200):  # step 1: 1e200 per element, finite in float64
            model(scale).backward()
            g = model.w.grad.numpy()
            model.clear_gradients()
    assert np.isfinite(g).all() and np.sqrt(np.sum((g / 1e200) ** 2)) * 1e200 > 3.5e38
    page_file = save_run_html(open_run(tmp_path / "run"), tmp_path / "run.html")
    with saved_run_page(chromium_browser, page_file) as (page, root):
        view = RunView(page, root)
        view.click_cell(1, 0)
        view.wait_detail(1, "params")
        (row,) = view.summary_rows()
        assert row["cells"][3:] == ["> 3.4e+38", "> 3.4e+38", "0", "0"], row
