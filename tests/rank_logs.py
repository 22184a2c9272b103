"""Multi-rank run logs for the reading side's tests and benchmarks, written by the run log's
own writer (runs/log_writer.py) in RUN_DIR/rank-NNNNN/ as a launched job's ranks write them,
with the issue's scenarios planted in the arrays (real launcher runs are tests/distributed/).

Gradient norms are drawn per step and shared by every rank (DataParallel's all-reduce makes
the synchronised gradients equal); each rank's loss is its own. The oracle is what the
generator planted, from the arrays it wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Plant:
    nan: tuple[int, int] | None = None  # (rank, step): that rank's batch holds a NaN
    branch_rank: int | None = None  # only this rank takes the branch (its params' gradient)
    unsynced: tuple[int, int] | None = None  # (rank, step): that rank's step is not synced
    branch: list[int] = field(default_factory=list)  # the branch's parameter indices
    filled: bool = False  # find_unused_parameters=True: ranks without the branch still hold
    # its all-reduced gradient (only their graphs, in the captures, lack it)
    nan_loss: bool = True  # False: the NaN never reached that rank's loss (a ReLU cut it)


def branchy_model() -> Any:
    import paddle.nn as nn
    import paddle.nn.functional as F

    class Branchy(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 8)
            self.branch = nn.Linear(8, 8)
            self.head = nn.Linear(8, 2)

        def forward(self, x: Any, take: bool = False) -> Any:
            h = F.relu(self.fc2(F.relu(self.fc1(x))))
            if take:
                h = h + self.branch(h)
            return self.head(h)

    return Branchy()


def branchy_captures() -> tuple[list[Any], list[str], dict[bool, dict[str, Any]]]:
    """The model's params, layers and a real traced backward graph with and without the
    branch (build_graph of trace(stats=True))."""
    import paddle
    import pytest
    from paddle_versions import HAS_POST_HOOKS

    from paddleviz_widget import build_graph, trace
    from paddleviz_widget.runs.params import layer_order, model_params

    if not HAS_POST_HOOKS:  # unreached parameters come with a capture's statistics
        pytest.skip(f"paddle {paddle.__version__}: trace(stats=True) needs >= 3.0")

    paddle.seed(0)
    model = branchy_model()
    infos, _ = model_params(model)
    docs = {}
    for take in (False, True):
        with trace(model, stats=True):
            y = model(paddle.randn([2, 4]), take)
            y.sum().backward()
        docs[take] = build_graph(y, model=model)
        model.clear_gradients()
    return infos, layer_order(infos), docs


def ranked_run(
    run_dir: str | Path, world_size: int = 4, steps: int = 30, *, plant: Plant | None = None,
    params: list[Any] | None = None, layers: list[str] | None = None,
    captures: dict[bool, dict[str, Any]] | None = None, every: int = 10,
    run_id: str = "job-1", ranks: list[int] | None = None, running: tuple[int, ...] = (),
    seed: int = 0, keep: bool = True, only: list[int] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Write the job's rank logs; returns {"writers" (still open: ``running``), "norms"
    {rank: (S, P)}, "loss" {rank: (S,)}}."""
    from paddleviz_widget.runs import format as fmt
    from paddleviz_widget.runs.log_writer import RunLogWriter

    plant = plant or Plant()
    if params is None:
        params, layers, captures = branchy_captures()
    if plant.branch_rank is not None and not plant.branch:
        plant.branch = [i for i, p in enumerate(params) if p.layer == "branch"]
    assert layers is not None
    recorded = list(range(world_size)) if ranks is None else ranks
    if only is not None:  # this process writes these of them (the others: another process)
        recorded = [r for r in recorded if r in only]
    writers = {
        r: RunLogWriter(
            fmt.rank_dir(run_dir, r),
            params=params,
            layers=layers,
            every=every,
            thresholds={},
            rank=r,
            world_size=world_size,
            run_id=run_id,
            ranks=ranks,
        )  # fmt: skip
        for r in recorded
    }
    n = len(params)
    base = np.exp(np.random.default_rng(seed).normal(-2, 1, n))
    zeros = np.zeros(n)
    norms = {r: np.zeros((steps if keep else 1, n), np.float32) for r in recorded}
    losses = {r: np.zeros(steps) for r in recorded}
    for step in range(steps):
        rng = np.random.default_rng([seed, step])  # the same draws whichever ranks are written
        shared = base * np.exp(rng.normal(0, 0.2, n))
        jitter = rng.random(world_size)
        for r in recorded:
            norm = shared.copy()
            nan = zeros
            loss = float(2 * np.exp(-step / 50) + 0.01 * r + 0.001 * jitter[r])
            if plant.branch and r != plant.branch_rank and not plant.filled:
                norm[plant.branch] = np.nan  # the branch not taken: no gradient here
            if plant.nan is not None and step == plant.nan[1]:
                nan = np.full(n, 3.0)  # all-reduce carries the NaN to every rank
                if r == plant.nan[0] and plant.nan_loss:
                    loss = float("nan")
            if plant.unsynced is not None and (r, step) == plant.unsynced:
                norm = norm * np.exp(rng.normal(0, 0.05, n))
            writers[r].write_step(step, norm, norm / 3, nan, zeros, loss)
            norms[r][step if keep else 0], losses[r][step] = norm, loss
            if captures is not None and step % every == 0:
                writers[r].write_capture(step, captures[r == plant.branch_rank])
    for r, w in writers.items():
        if r not in running:
            w.close()
    return {"writers": writers, "norms": norms, "loss": losses, "params": params}


def wide_params(n_params: int) -> tuple[list[Any], list[str]]:
    """``n_params`` parameters, a weight and a bias per layer (the benchmark's model)."""
    from paddleviz_widget.runs.params import ParamInfo

    infos = [
        ParamInfo(f"blocks.{i // 2}.{'bias' if i % 2 else 'weight'}", f"blocks.{i // 2}",
                  (64,) if i % 2 else (64, 64), "float32")
        for i in range(n_params)
    ]  # fmt: skip
    return infos, list(dict.fromkeys(p.layer for p in infos))
