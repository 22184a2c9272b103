"""The run log on disk: readable while written, to its last step after SIGKILL, and clear
errors for directories that are not (yet) run logs."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import paddle
import pytest
from paddle_versions import HAS_POST_HOOKS

from paddleviz_widget import RunLogError, open_run
from paddleviz_widget.runs.log_writer import RunLogWriter
from paddleviz_widget.runs.params import ParamInfo

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("part_steps", [[], ["100"]], ids=["tail alone", "parts and tail"])
def test_sigkill_mid_run_reads_back_to_its_last_step(tmp_path, part_steps):
    run_dir = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    child = subprocess.Popen(
        [sys.executable, str(HERE / "run_models.py"), str(run_dir), *part_steps],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    losses: dict[int, float] = {}
    seen_running = 0
    try:
        assert child.stdout is not None
        for line in child.stdout:
            step, loss = line.split()
            losses[int(step)] = float(loss)
            if int(step) % 40 == 0 and int(step) > 0:  # a notebook refreshing the run meanwhile
                run = open_run(run_dir)
                assert run.meta["status"] == "running"
                assert run.steps.tolist() == list(range(len(run.steps)))
                assert len(run.steps) >= int(step)  # the child prints after its backward
                seen_running += 1
            if int(step) >= 260:
                break
        os.kill(child.pid, signal.SIGKILL)
        # what the child printed until it died (its pipe still holds some)
        for line in child.stdout:
            step, loss = line.split()
            losses[int(step)] = float(loss)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL and seen_running >= 5
    run = open_run(run_dir)
    assert run.meta["status"] == "stopped"
    last = max(losses)
    assert run.steps.tolist() == list(range(len(run.steps)))
    assert len(run.steps) in (last + 1, last + 2)  # a step recorded, not yet printed: fine
    np.testing.assert_array_equal(run.loss[: last + 1], [losses[s] for s in range(last + 1)])
    assert run.captured_steps[:5] == [0, 50, 100, 150, 200]
    for step in run.captured_steps:  # every capture written before the kill: whole (3.0 columns)
        run.graph(step)
    last_graph = run.graph(run.captured_steps[-1])  # its problems are found now, on reading
    if HAS_POST_HOOKS:  # the capture's statistics (Paddle >= 3.0)
        assert "problems" in last_graph["meta"] and any(e.get("stats") for e in last_graph["edges"])
    assert not np.isnan(run.param_stat("norm")).any()
    parts = sorted(p.name for p in (run_dir / "steps").glob("part-*.parquet"))
    assert parts[0] == "part-000000000-000000000.parquet"  # step 0's, at once: steps/ is readable
    assert len(parts) >= 3 if part_steps else len(parts) == 1  # then 1-99, 100-199 (, ...)


def _writer(path: Path, params: int = 3) -> RunLogWriter:
    infos = [ParamInfo(f"l{i}.weight", f"l{i}", (2, 2), "float32") for i in range(params)]
    return RunLogWriter(path, params=infos, layers=[p.layer for p in infos], every=10,
                        thresholds={})  # fmt: skip


def test_half_written_tail_line_is_not_read_and_run_in_progress_is_not_corrupt(tmp_path):
    w = _writer(tmp_path / "run")
    for step in range(5):
        v = np.full(3, step + 1.0)
        w.write_step(step, v, v, np.zeros(3), np.zeros(3), float(step))
    with open(tmp_path / "run" / "tail.jsonl", "a") as f:
        f.write('{"step": 5, "loss": 5.0, "norm": [1.0, ')  # a writer caught mid-line
    run = open_run(tmp_path / "run")
    assert run.meta["status"] == "running" and run.steps.tolist() == [0, 1, 2, 3, 4]
    assert not run.refresh()
    w.close()
    assert run.refresh() and run.meta["status"] == "finished"


def test_parameter_without_gradient_is_absent_not_zero(tmp_path):
    w = _writer(tmp_path / "run")
    norm = np.array([1.0, np.nan, 2.0])
    w.write_step(0, norm, norm, np.zeros(3), np.zeros(3), None)
    w.close()
    run = open_run(tmp_path / "run")
    assert np.isnan(run.param_stat("norm")[0, 1]) and np.isnan(run.loss[0])
    assert np.isnan(run.layer_norm()[0, 1]) and run.layer_norm()[0, 2] == 2.0
    import pandas as pd

    frame = pd.read_parquet(tmp_path / "run" / "steps")
    assert frame["norm"].isna().tolist() == [False, True, False]


def test_the_readmes_anomaly_read_works_on_a_run_without_anomalies(tmp_path):
    """README: pd.read_json("runs/exp1/anomalies.jsonl", lines=True). The file was made at
    the first anomaly only: on a healthy run (most runs), FileNotFoundError."""
    import pandas as pd

    w = _writer(tmp_path / "run")
    w.write_step(0, np.ones(3), np.ones(3), np.zeros(3), np.zeros(3), 1.0)
    assert pd.read_json(tmp_path / "run" / "anomalies.jsonl", lines=True).empty
    w.write_anomaly({"step": 0, "kind": "spike", "layer": "l0", "params": ["l0.weight"],
                     "value": 9.0, "threshold": 1.0, "message": "step 0: spike"})  # fmt: skip
    w.close()
    frame = pd.read_json(tmp_path / "run" / "anomalies.jsonl", lines=True)
    assert frame["kind"].tolist() == ["spike"] and open_run(tmp_path / "run").problems()


def test_a_run_dir_written_again_while_open_is_not_read_on_top_of_the_old_run(tmp_path):
    """The directory deleted and a new run written there while a reader (an open explorer)
    holds it: refresh() read the new run's parts on top of the old one's cached ones (steps
    and losses of both, the old parameters), and said True."""
    import shutil

    from paddleviz_widget import trace

    def watched_run(seed: int, steps: int) -> None:
        paddle.seed(seed)
        model = paddle.nn.Linear(4, 1)
        with trace(model, stats=True, every=10, run_dir=tmp_path / "run"):
            for _ in range(steps):
                (model(paddle.randn([2, 4])) ** 2).mean().backward()
                model.clear_gradients()

    watched_run(0, 6)
    run = open_run(tmp_path / "run")
    shutil.rmtree(tmp_path / "run")
    watched_run(1, 3)
    with pytest.raises(RunLogError, match=f"{tmp_path / 'run'} now holds another run"):
        run.refresh()
    assert open_run(tmp_path / "run").steps.tolist() == [0, 1, 2]


def test_a_second_run_into_the_same_dir_is_refused(tmp_path):
    _writer(tmp_path / "run").close()
    with pytest.raises(RunLogError, match="already holds a run log.*new"):
        _writer(tmp_path / "run")


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda p: None, ["does not exist", "run_dir"]),
        (lambda p: p.mkdir(), ["is empty", "run.json"]),
        (lambda p: p.write_text("x"), ["is a file", "run directory"]),
        (lambda p: (p.mkdir(), (p / "notes.txt").write_text("hi")), ["not a run log", "run_dir"]),
        (
            lambda p: (p.mkdir(), (p / "run.json").write_text('{"run_schema": "1.0", "ev')),
            ["cannot be read as JSON", "damaged"],
        ),
        (
            lambda p: (p.mkdir(), (p / "run.json").write_text('{"name": "x"}')),
            ["no run_schema", "not a paddleviz_widget run log"],
        ),
        (
            lambda p: (p.mkdir(), (p / "run.json").write_text(json.dumps({"run_schema": "4.0"}))),
            ["newer paddleviz_widget", "run_schema 4.0", "pip install -U"],
        ),
    ],
    ids=["missing", "empty", "file", "not-a-run", "half-written", "no-schema", "newer"],
)
def test_bad_run_dirs_get_an_error_naming_path_and_fix(tmp_path, make, words):
    path = tmp_path / "run"
    make(path)
    with pytest.raises(RunLogError) as error:
        open_run(path)
    assert isinstance(error.value, ValueError)
    assert str(path) in str(error.value)
    for word in words:
        assert word in str(error.value)


def test_older_minor_version_reads_and_missing_capture_is_named(tmp_path):
    w = _writer(tmp_path / "run")
    w.write_step(0, np.ones(3), np.ones(3), np.zeros(3), np.zeros(3), 1.0)
    empty = {"schema_version": "2.2", "tensors": [], "files": [], "sites": [], "ops": {}}
    w.write_capture(0, {**empty, "nodes": [], "edges": [], "groups": []})
    w.close()
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    meta["run_schema"] = "1.7"  # a newer minor of the same major adds, never changes
    (tmp_path / "run" / "run.json").write_text(json.dumps(meta))
    run = open_run(tmp_path / "run")
    assert run.captured_steps == [0] and run.graph(0)["nodes"] == []
    with pytest.raises(RunLogError, match="step 3 .* no full capture; captured steps: 0"):
        run.graph(3)
    (tmp_path / "run" / "captures" / "capture-000000000.json.zst").write_bytes(b"garbage")
    with pytest.raises(RunLogError, match="capture-000000000.json.zst cannot be read"):
        run.graph(0)
    assert gzip  # the capture format: gzip over JSON, tested through write_capture above


def test_compact_1000_steps_by_300_params_well_under_10_mb(tmp_path):
    rng = np.random.default_rng(0)
    w = _writer(tmp_path / "run", params=300)
    for step in range(1000):
        norm = rng.random(300).astype(np.float32)
        w.write_step(step, norm, norm / 2, np.zeros(300), np.zeros(300), float(step))
    w.close()
    size = sum(f.stat().st_size for f in (tmp_path / "run").rglob("*") if f.is_file())
    assert size < 5 * 2**20, size
    run = open_run(tmp_path / "run")
    assert run.param_stat("norm").shape == (1000, 300)


def test_reading_while_running_takes_only_new_parts(tmp_path):
    w = _writer(tmp_path / "run")
    for step in range(250):
        v = np.full(3, 1.0)
        w.write_step(step, v, v, np.zeros(3), np.zeros(3), 0.5)
    run = open_run(tmp_path / "run")
    assert run.steps.tolist() == list(range(250))
    start = time.perf_counter()
    for step in range(250, 420):
        w.write_step(step, np.full(3, 2.0), np.full(3, 2.0), np.zeros(3), np.zeros(3), 0.5)
    assert run.refresh() and run.steps.tolist() == list(range(420))
    assert (run.param_stat("norm")[250:] == 2.0).all()
    assert time.perf_counter() - start < 10
    w.close()


def test_run_schema_1_0_parts_in_any_row_order_read_the_same_as_1_1(tmp_path):
    """1.1 parts are tagged step-major and reshaped; 1.0 parts (untagged) are checked, and
    rows in another order are placed one by one: the arrays come out the same."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    w = _writer(tmp_path / "run", params=5)
    for step in range(250):  # three parts (0, 1-99, 100-199) and a tail
        norm = rng.random(5) * (step + 1)
        norm[step % 5] = np.nan if step % 7 == 0 else norm[step % 5]
        nan = (rng.random(5) < 0.05).astype(float)
        w.write_step(step, norm, norm / 2, nan, np.zeros(5), float(step) if step % 3 else None)
    expected = open_run(tmp_path / "run")
    want = {s: expected.param_stat(s).copy() for s in ("norm", "max_abs", "nan", "inf")}
    want_layers, want_loss = expected.layer_norm().copy(), expected.loss.copy()
    parts = sorted((tmp_path / "run" / "steps").glob("part-*.parquet"))
    assert len(parts) == 3
    for k, part in enumerate(parts):
        table = pq.read_table(part)
        assert table.schema.metadata[b"paddleviz_widget.layout"] == b"step-major"
        table = table.replace_schema_metadata(None)  # as 1.0 wrote it
        if k == 1:  # rows in another order: by parameter, steps descending
            by_param = table["param"].combine_chunks().indices
            table = table.take(pa.array(np.lexsort((-table["step"].to_numpy(), by_param))))
        pq.write_table(table, part)
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    meta["run_schema"] = "1.0"
    (tmp_path / "run" / "run.json").write_text(json.dumps(meta))
    run = open_run(tmp_path / "run")
    assert run.steps.tolist() == list(range(250))
    np.testing.assert_array_equal(run.loss, want_loss)
    for stat, grid in want.items():
        np.testing.assert_array_equal(run.param_stat(stat), grid)
    np.testing.assert_array_equal(run.layer_norm(), want_layers)
    # independent of the reader: the layer norms from the rows pandas reads
    import pandas as pd

    frame = pd.read_parquet(tmp_path / "run" / "steps")
    at100 = frame[frame["step"] == 100].set_index("param")["norm"]
    for j, p in enumerate(run.params[:5]):
        assert run.layer_norm()[100, j] == pytest.approx(at100[p.name], rel=1e-6, nan_ok=True)
    w.close()


@pytest.mark.parametrize(("code", "status"), [(0, "finished"), (None, "finished"), (2, "stopped")])
def test_sys_exit_inside_the_watched_loop(tmp_path, code, status):
    """Early stopping by sys.exit(0) ends the run as finished (it said stopped, error
    "SystemExit: 0"); a non-zero status is a stop."""
    from run_models import TinyMLP, train

    from paddleviz_widget import trace

    paddle.seed(0)
    model = TinyMLP()
    opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
    with pytest.raises(SystemExit), trace(model, every=5, run_dir=tmp_path / "run"):
        train(model, opt, 7)
        sys.exit(code)
    run = open_run(tmp_path / "run")
    assert run.meta["status"] == status and run.steps.tolist() == list(range(7))
    assert run.meta.get("error") == (None if status == "finished" else "SystemExit: 2")
