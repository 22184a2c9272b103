"""README's lines that read a run log with pandas, polars and DuckDB, run exactly as printed, on
real runs: healthy and in progress (steps/ held no file until the first part: "no files"),
finished, and with problems (anomalies.jsonl empty on a healthy run: polars raised)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from paddleviz_widget import open_run

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO)}

TRAIN = """\
import os, sys, time
from paddleviz_widget import trace  # above paddle: Paddle 2.6 (README, zlib)
import paddle
import paddle.nn.functional as F
paddle.seed(0)
model = paddle.nn.Sequential(paddle.nn.Linear(8, 16), paddle.nn.ReLU(), paddle.nn.Linear(16, 1))
opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
sick = sys.argv[1] == "sick"
with trace(model, stats=True, every=50, run_dir="runs/exp1"):
    for step in range(120):
        if step == 5 and not sick:  # a run in progress, read meanwhile
            open("paused", "w").close()
            while not os.path.exists("go"):
                time.sleep(0.05)
        x = paddle.randn([16, 8])
        if sick and step == 60:
            x = x * 1e4  # a spike, then an Inf loss
        loss = F.mse_loss(model(x), x.sum(axis=1, keepdim=True))
        loss.backward()
        opt.step()
        opt.clear_grad()
"""


def readme_lines() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("```python\nimport pandas as pd, polars as pl, duckdb")
    block = text[start + len("```python\n") : text.index("```", start + 10)]
    return [ast.unparse(node) for node in ast.parse(block).body]


def run_readme(where: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Each line of the README's block run in ``where``; the value of each expression."""
    monkeypatch.chdir(where)
    scope: dict[str, Any] = {}
    values = {}
    for line in readme_lines():
        if line.startswith("import "):
            exec(line, scope)
        else:
            values[line] = eval(line, scope)
    return values


def _frames(values: dict[str, Any]) -> list[Any]:
    return list(values.values())


def test_the_readme_reads_a_healthy_run_in_progress_and_finished(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(TRAIN)
    child = subprocess.Popen([sys.executable, "train.py", "healthy"], cwd=tmp_path, env=ENV,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "paused").exists():
            assert child.poll() is None and time.monotonic() < deadline, child.stderr.read()
            time.sleep(0.05)
        steps, polars, duck, anomalies, polars_anomalies = _frames(
            run_readme(tmp_path, monkeypatch)
        )
        recorded = open_run(tmp_path / "runs" / "exp1")
        assert recorded.meta["status"] == "running" and recorded.steps.tolist() == [0, 1, 2, 3, 4]
        assert set(steps["step"]) == {0} and len(polars) == len(steps) == 4  # 2 layers' w, b
        assert duck["step"].tolist() == [0] and len(anomalies) == len(polars_anomalies) == 0
        (tmp_path / "go").touch()
        assert child.wait(timeout=120) == 0, child.stderr.read()
    finally:
        if child.poll() is None:
            child.kill()
    steps, polars, duck, anomalies, polars_anomalies = _frames(run_readme(tmp_path, monkeypatch))
    run = open_run(tmp_path / "runs" / "exp1")
    assert run.meta["status"] == "finished" and len(run.steps) == 120 and not run.anomalies
    assert sorted(set(steps["step"])) == list(range(120)) and len(polars) == 120 * 4
    assert sorted(duck["step"]) == list(range(120))
    maxima = duck.set_index("step").iloc[:, 0].sort_index().to_numpy()
    assert (abs(maxima - run.param_stat("norm").max(axis=1)) <= 1e-6 * maxima).all()
    assert len(anomalies) == len(polars_anomalies) == 0


def test_the_readme_reads_a_run_with_problems(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(TRAIN)
    done = subprocess.run([sys.executable, "train.py", "sick"], cwd=tmp_path, env=ENV,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = open_run(tmp_path / "runs" / "exp1")
    steps, polars, duck, anomalies, polars_anomalies = _frames(run_readme(tmp_path, monkeypatch))
    assert len(steps) == len(polars) == 120 * 4 and len(duck) == 120
    kinds = [a.kind for a in run.anomalies]
    assert "spike" in kinds and "nonfinite" in kinds
    assert anomalies["kind"].tolist() == kinds == polars_anomalies["kind"].to_list()
    assert anomalies["step"].tolist() == [a.step for a in run.anomalies]
