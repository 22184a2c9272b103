"""Real run logs for the run explorer's tests: a LeNet trained with SGD inside
``trace(model, stats=True, every=..., run_dir=...)`` (a watched run), in this process or as a
script (``python tests/run_logs.py RUN_DIR STEPS [--nan-step N] [--sleep S] [--oracle FILE]``,
e.g. a run still being written while a notebook reads it).

The oracle is independent of the run log: each step listed is read from the parameters'
``.grad`` with NumPy right after backward (L2 norm, max |g|, NaN and Inf counts), and the step
with the NaN batch is recorded as the script put it there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
NAN_STEP = 137  # the batch with a NaN pixel: its gradients hold NaN, its update is skipped
EVERY = 100


def start_writer(run_dir: str | Path, steps: int, sleep: float) -> subprocess.Popen:
    """This script in another process, writing ``run_dir`` for ``steps`` steps with ``sleep``
    seconds between them (a run still going while a test reads it)."""
    path = os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    script = [sys.executable, str(HERE / "run_logs.py"), str(run_dir), str(steps)]
    return subprocess.Popen(
        [*script, "--sleep", str(sleep)],
        env={**os.environ, "PYTHONPATH": path}, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def grad_summary(model: Any) -> dict[str, list[float]]:
    """name -> [norm of the finite elements, max |g|, NaN count, Inf count], from .grad."""
    out = {}
    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        g = p.grad.numpy().astype(np.float64).ravel()
        finite = g[np.isfinite(g)]
        out[name] = [
            float(np.sqrt((finite * finite).sum())),
            float(np.abs(finite).max()) if finite.size else 0.0,
            float(np.isnan(g).sum()),
            float(np.isinf(g).sum()),
        ]
    return out


def watched_training(
    run_dir: str | Path, steps: int, *, nan_step: int | None = NAN_STEP, every: int = EVERY,
    sleep_s: float = 0.0, oracle_steps: tuple[int, ...] = (),
) -> dict[str, Any]:  # fmt: skip
    """Train LeNet for ``steps`` steps, watched into ``run_dir``; returns the oracle:
    {"steps", "nan_step", "grads": {step: grad_summary}, "layers": ...}."""
    import paddle
    import paddle.nn as nn

    sys.path.insert(0, str(HERE))
    from models import LeNet

    from paddleviz_widget import trace

    paddle.seed(0)
    model = LeNet()
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    grads: dict[str, Any] = {}
    with trace(model, stats=True, every=every, run_dir=str(run_dir)):
        for step in range(steps):
            x = paddle.randn([4, 3, 32, 32])
            if step == nan_step:
                x[0, 0, 0, 0] = float("nan")
            label = paddle.randint(0, 10, [4])
            loss = nn.functional.cross_entropy(model(x), label)
            loss.backward()
            if step in oracle_steps or step == nan_step:
                grads[str(step)] = grad_summary(model)
            if step != nan_step:
                opt.step()
            opt.clear_grad()
            if sleep_s:
                time.sleep(sleep_s)
    return {"steps": steps, "nan_step": nan_step, "grads": grads}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_dir")
    parser.add_argument("steps", type=int)
    parser.add_argument("--nan-step", type=int, default=NAN_STEP)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--oracle", help="write the oracle here (JSON)")
    parser.add_argument("--oracle-steps", default="", help="comma-separated steps")
    options = parser.parse_args()
    wanted = tuple(int(s) for s in options.oracle_steps.split(",") if s)
    oracle = watched_training(
        options.run_dir, options.steps, nan_step=options.nan_step, sleep_s=options.sleep,
        oracle_steps=wanted,
    )  # fmt: skip
    if options.oracle:
        Path(options.oracle).write_text(json.dumps(oracle))


if __name__ == "__main__":
    main()


BIG_SPIKE = (6_543, 321)  # (step, layer index): one step's norm 1000x its layer's usual
BIG_NAN = (8_000, 17)  # (step, parameter index): NaN gradient elements


def big_run(
    run_dir: str | Path, steps: int = 10_000, layers: int = 500, keep_open: bool = False
) -> Any:
    """A run log of ``steps`` x 2 * ``layers`` parameters (a Sequential of Linear(4, 4)),
    written with the run log's own writer (runs/log_writer.py): step summaries drawn at
    random (a spike at BIG_SPIKE, NaN at BIG_NAN), step 0 fully captured from a real traced
    backward of the model. For the explorer's scale checks; a watched run this long would
    take minutes. ``keep_open``: the writer is returned open (the run still "running"), for
    more steps (``big_step``) and the explorer's refresh."""
    import paddle
    import paddle.nn as nn

    from paddleviz_widget import build_graph, trace
    from paddleviz_widget.runs.anomaly import Anomaly
    from paddleviz_widget.runs.log_writer import RunLogWriter
    from paddleviz_widget.runs.params import layer_order, model_params

    paddle.seed(0)
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(layers)])
    infos, _ = model_params(model)
    writer = RunLogWriter(
        run_dir, params=infos, layers=layer_order(infos), every=1000, thresholds={}
    )
    with trace(model, stats=True):
        y = model(paddle.randn([2, 4]))
        y.sum().backward()
    writer.write_capture(0, build_graph(y, model=model))
    rng = np.random.default_rng(0)
    n = len(infos)
    base = np.exp(rng.normal(-2, 1.5, n))
    zeros = np.zeros(n)
    for step in range(steps):
        norm = base * np.exp(rng.normal(0, 0.2, n)) * np.exp(-step / 20_000)
        nan = zeros
        if step == BIG_SPIKE[0]:
            norm[2 * BIG_SPIKE[1] : 2 * BIG_SPIKE[1] + 2] *= 1000
        if step == BIG_NAN[0]:
            nan = zeros.copy()
            nan[BIG_NAN[1]] = 3
        writer.write_step(step, norm, norm / 4, nan, zeros, float(2 * np.exp(-step / 3000)))
    spike_layer = infos[2 * BIG_SPIKE[1]].layer
    words = f"step {BIG_SPIKE[0]}: gradient norm spike in {spike_layer}"
    writer.write_anomaly(
        Anomaly(BIG_SPIKE[0], "spike", spike_layer, [], 1e3, 10.0, words).to_json()
    )
    if keep_open:
        return writer
    writer.close()
    return None


def big_step(writer: Any, step: int) -> None:
    """One more step of a big_run left open: every parameter's norm drawn at random."""
    n = writer._n
    norm = np.exp(np.random.default_rng(step).normal(-2, 1.5, n))
    zeros = np.zeros(n)
    writer.write_step(step, norm, norm / 4, zeros, zeros, float(2 * np.exp(-step / 3000)))
