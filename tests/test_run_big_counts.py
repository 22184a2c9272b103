"""NaN / Inf counts past 2**24 in a watched run (a big embedding's gradient with NaN in most
rows): the log's Parquet holds them exactly (int64), but the reader gave them as float32, so
run.param_stat("nan"), run.param_row and run.summary_frame() said 16,777,220 NaN where the
gradient had 16,777,219 (and pandas, reading the same part, said 16,777,219); so did the run
explorer's Parameters table, live (the kernel's step summary) and in a saved page (its
every-step summaries), both float32. Oracles: p.grad read by NumPy in the loop, and the
Parquet part read by pyarrow itself. Both the parts and the tail (a run still going) are
read."""

from __future__ import annotations

import base64
import gzip
import json
import re

import numpy as np
import paddle
import pyarrow.parquet as pq
from test_run_view import WireComm, from_page

from paddleviz_widget import open_run, trace
from paddleviz_widget.runs.view_page import DATA_ID, run_html
from paddleviz_widget.runs.view_widget import STEP_MESSAGE, RunWidget

N = (1 << 24) + 4  # elements: one finite, the rest NaN: 2**24 + 3 NaN, odd (float32: 2**24 + 4)


class Wide(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.w = self.create_parameter([N])

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return (self.w * x).sum()


def test_nan_counts_past_2_to_the_24_read_back_exactly(tmp_path):
    model = Wide()
    run_dir = tmp_path / "run"
    x = paddle.full([N], float("nan"))
    x[1] = 1.0
    counts = []
    with trace(model, run_dir=run_dir, every=100):
        for _ in range(2):
            model(x).backward()
            counts.append(int(np.isnan(model.w.grad.numpy()).sum()))
            model.clear_gradients()
        going = open_run(run_dir)  # step 0 in its part, step 1 in the tail
        assert going.param_stat("nan")[:, 0].tolist() == counts
    assert counts == [N - 1, N - 1] and (N - 1) % 2 == 1  # odd past 2**24: float32 cannot

    run = open_run(run_dir)
    written = pq.read_table(run_dir / "steps").to_pydict()
    assert written["nan"] == counts  # the Parquet holds them exactly
    assert run.param_stat("nan")[:, 0].tolist() == counts  # said 16777220.0 before
    assert run.param_row("nan", 1).tolist() == [counts[1]]
    assert run.summary_frame()["nan"].tolist() == counts
    assert run.param_stat("inf")[:, 0].tolist() == [0, 0]
    assert run.param_stat("norm").dtype == np.float32  # sizes stay float32, as documented

    # The run explorer: the kernel's answer to a picked step, and a saved page's summaries
    widget = RunWidget(run_dir, comm=WireComm())
    ((reply, buffers),) = from_page(widget, {"type": STEP_MESSAGE, "id": 3, "step": 1})
    assert "error" not in reply, reply
    summary = np.frombuffer(buffers[0], "<f8" if len(buffers[0]) == 32 else "<f4")
    assert summary.reshape(4, 1)[2].tolist() == [counts[1]]  # the page read 16777220
    page = re.search(f'id="{DATA_ID}">(.*?)</script>', run_html(run), re.S)
    assert page is not None
    data = json.loads(page.group(1))
    raw = gzip.decompress(base64.b64decode(data["summaries"]))
    every = np.frombuffer(raw, "<f8" if data.get("summary_width") == 8 else "<f4")
    assert every.reshape(2, 4, 1)[:, 2, 0].tolist() == counts
