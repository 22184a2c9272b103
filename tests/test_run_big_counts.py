"""NaN / Inf counts past 2**24 in a watched run (a big embedding's gradient with NaN in most
rows): the log's Parquet holds them exactly (int64), but the reader gave them as float32, so
run.param_stat("nan"), run.param_row and run.summary_frame() said 16,777,220 NaN where the
gradient had 16,777,219 (and pandas, reading the same part, said 16,777,219). Oracles: p.grad
read by NumPy in the loop, and the Parquet part read by pyarrow itself. Both the parts and the
tail (a run still going) are read."""

from __future__ import annotations

import numpy as np
import paddle
import pyarrow.parquet as pq

from paddleviz_widget import open_run, trace

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
