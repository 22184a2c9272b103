"""A watched float16 run under paddle.amp.GradScaler (tests/grad_scaler_run.py: Paddle's own
AMP code, made to run on this CPU). The scaler multiplies its loss scale (2**16 at first)
into the loss and every gradient until step(): the run log must record the loss and the
gradients the optimizer applies (the oracle: the test's p.grad divided by the scale), a step
the scaler skips for an overflow is information, not a NaN alarm, and a NaN the scaler cannot
cure (still there at scale 1) is a problem. Real processes, real Paddle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from paddle_versions import PADDLE_VERSION

from paddleviz_widget import open_run

# Paddle < 3.3's own GradScaler.update() calls float() on its [1]-shaped scale, which NumPy 2
# refuses (TypeError), and its graphs' first notice is the VLOG one (< 3.3); 2.6 has no post
# hooks (trace(stats=True)). On 3.0 loss_scaling.py reads the [1]-shaped scale (checked by hand).
pytestmark = pytest.mark.skipif(
    PADDLE_VERSION < (3, 3), reason="Paddle < 3.3: GradScaler.update() fails under NumPy 2"
)

RUNNER = Path(__file__).with_name("grad_scaler_run.py")


def _run(tmp_path: Path, mode: str) -> tuple[Path, list[dict]]:
    run_dir, out = tmp_path / f"run_{mode}", tmp_path / f"{mode}.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, str(RUNNER), str(run_dir), mode, str(out)],
                          capture_output=True, text=True, env=env, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return run_dir, json.loads(out.read_text())


@pytest.fixture(scope="module")
def overflow(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    return _run(tmp_path_factory.mktemp("scaler"), "overflow")


def test_the_log_records_the_loss_and_gradients_the_optimizer_applies(overflow):
    run_dir, steps = overflow
    run = open_run(run_dir)
    assert [s["scale"] for s in steps[:3]] == [65536.0, 32768.0, 16384.0]  # the scaler ran
    assert run.loss == pytest.approx([s["loss"] for s in steps], rel=1e-6)
    names = [p.name for p in run.params]
    norm, max_abs = run.param_stat("norm"), run.param_stat("max_abs")
    for k, s in enumerate(steps):
        for j, name in enumerate(names):
            g = np.asarray(s["grads"][name]) / s["scale"]  # unscale_()'s division
            finite = g[np.isfinite(g)]
            assert norm[k, j] == pytest.approx(np.sqrt((finite**2).sum()), rel=1e-5), (k, name)
            assert max_abs[k, j] == pytest.approx(np.abs(finite).max(), rel=1e-5), (k, name)


def test_an_overflow_the_scaler_skips_is_information_not_a_problem(overflow):
    run_dir, steps = overflow
    bad = [k for k, s in enumerate(steps)
           if any(not np.isfinite(np.asarray(g)).all() for g in s["grads"].values())]  # fmt: skip
    assert bad == [0, 1]  # the float16 overflow at 2**16 and 2**15, then it trains
    run = open_run(run_dir)
    assert run.problems() == []
    (note,) = run.anomalies
    assert (note.step, note.kind) == (0, "skipped")
    assert "GradScaler skips this step" in note.message
    assert "65536 to 32768" in note.message and "4.weight" in note.message


def test_a_capture_says_its_statistics_are_the_scaled_gradients(overflow):
    run_dir, steps = overflow
    notice = open_run(run_dir).graph(5)["meta"]["notice"]
    assert f"loss scale {steps[5]['scale']:g}" in notice and "Divide" in notice


def test_gradients_and_output_are_those_of_the_untraced_run(overflow, tmp_path):
    _, traced = overflow
    _, plain = _run(tmp_path, "plain")
    assert [s["grads"] for s in traced] == [s["grads"] for s in plain]
    assert [s["scale"] for s in traced] == [s["scale"] for s in plain]


def test_a_nan_the_scaler_cannot_cure_is_a_problem_once_the_scale_is_down_to_1(tmp_path):
    run_dir, steps = _run(tmp_path, "nan")
    assert [s["scale"] for s in steps[:4]] == [8.0, 4.0, 2.0, 1.0]
    run = open_run(run_dir)
    assert [(a.step, a.kind) for a in run.anomalies] == [(0, "skipped"), (3, "nonfinite")]
    (problem,) = run.problems()
    assert "loss scale is 1: not an overflow of the loss scaling" in problem.message


def test_a_graph_of_a_scaled_step_says_so_and_its_overflow_is_information(tmp_path):
    """trace(model, stats=True) + GraphWidget on the step whose scaled float16 gradients
    overflow: the statistics are the scaled gradients' (equal to p.grad in float64, no
    float16 square overflowing), the notice says by what to divide, and where the Inf was
    made is listed for information, not as a NaN problem."""
    _, got = _run(tmp_path, "graph")
    assert got["meta"]["loss_scale"] == {"scale": 65536.0, "dynamic": True}
    assert "loss scale 65536" in got["meta"]["notice"]
    assert len(got["edges"]) == 6
    for e in got["edges"]:
        g = np.asarray(e["grad"])
        finite = g[np.isfinite(g)]
        assert e["norm"] == pytest.approx(np.sqrt((finite**2).sum()), rel=1e-6), e["param"]
        assert e["max_abs"] == pytest.approx(np.abs(finite).max(), rel=1e-6), e["param"]
        assert e["inf"] == int(np.isinf(g).sum()), e["param"]
    assert max(e["norm"] for e in got["edges"]) > 65504  # its square overflows float16
    (finding,) = got["problems"]
    assert (finding["kind"], finding["severity"]) == ("nonfinite", "info")
    assert "GradScaler's loss scale 65536" in finding["reason"]


def test_a_diff_of_a_step_without_and_with_a_scaler_finds_no_gradient_changed(tmp_path):
    """GraphWidget.diff(fp32, amp), as README suggests: the scaled graph's norms are 1024x
    the other's (exactly: a power of 2), which is no change in the gradients applied."""
    _, got = _run(tmp_path, "diff")
    assert got["diff"]["compared"] == ["shape", "stats"]
    assert got["diff"]["counts"]["changed"] == {"nodes": 0, "edges": 0}, got["diff"]
    assert any("divided by each graph's GradScaler loss scale" in n and "1024" in n
               for n in got["notices"]), got["notices"]  # fmt: skip
