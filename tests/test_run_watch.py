"""trace(model, every=N, run_dir=...) on real training runs: anomalies at the right step and
layer, full captures where they are due, nothing on a healthy run. Oracles: the tests' own
reading of p.grad (.numpy(), float64 NumPy) in the training loop."""

from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle_versions import requires_post_hooks
from run_models import TinyMLP, train

from paddleviz_widget import open_run, trace
from paddleviz_widget.graph.schema import validate_graph_dict


def _grads(model: paddle.nn.Layer) -> dict[str, np.ndarray]:
    return {n: p.grad.numpy().astype(np.float64) for n, p in model.named_parameters()
            if p.grad is not None}  # fmt: skip


def _setup(seed: int = 0, lr: float = 1e-3) -> tuple[TinyMLP, object]:
    paddle.seed(seed)
    model = TinyMLP()
    return model, paddle.optimizer.SGD(lr, parameters=model.parameters())


def test_nan_batch_at_137_reported_there_with_its_params_and_138_captured(tmp_path):
    model, opt = _setup(lr=0.01)
    seen: dict[int, set[str]] = {}

    def poison(step, x):
        if step == 137:
            x[3, 2] = float("nan")

    def check(step, loss):
        bad = {n for n, g in _grads(model).items() if not np.isfinite(g).all()}
        if bad or not np.isfinite(float(loss)):
            seen[step] = bad
            return False  # skip the update, as a loss scaler would
        return True

    with trace(model, stats=True, every=100, run_dir=tmp_path / "run"):
        train(model, opt, 220, before=poison, after_backward=check)
    assert list(seen) == [137] and seen[137]  # the oracle: only that step had NaN gradients
    run = open_run(tmp_path / "run")
    assert run.meta["status"] == "finished"
    [anomaly] = run.problems()
    assert (anomaly.step, anomaly.kind) == (137, "nonfinite")
    assert set(anomaly.params) == seen[137]
    assert "step 137" in str(anomaly) and all(p in str(anomaly) for p in seen[137])
    assert run.captured_steps == [0, 100, 138, 200]
    nan = run.param_stat("nan")
    names = [p.name for p in run.params]
    row = run.steps.tolist().index(137)
    assert {names[j] for j in np.flatnonzero(nan[row] > 0)} == seen[137]
    assert np.nansum(nan) == nan[row].sum()  # no other step
    graph = run.graph(138)
    validate_graph_dict(graph)
    assert graph["meta"]["step"] == 138


@requires_post_hooks
def test_captured_step_has_edge_statistics(tmp_path):
    model, opt = _setup()
    with trace(model, stats=True, every=5, run_dir=tmp_path / "run"):
        train(model, opt, 6)
    run = open_run(tmp_path / "run")
    assert run.captured_steps == [0, 5]
    graph = run.graph(5)
    assert any(e.get("stats") for e in graph["edges"])


LR_JUMP = 3.0


def test_lr_jump_at_300_reported_at_301_in_the_layers_that_exploded(tmp_path):
    model, opt = _setup(lr=0.01)
    norms: list[dict[str, float]] = []

    def record(step, loss):
        layers: dict[str, float] = {}
        for name, g in _grads(model).items():
            layer = name.rsplit(".", 1)[0]
            layers[layer] = layers.get(layer, 0.0) + float((g * g).sum())
        norms.append({k: v**0.5 for k, v in layers.items()})
        if step == 300:
            opt.set_lr(LR_JUMP)  # the update of step 300: step 301's gradients explode
        return True

    with trace(model, stats=True, every=100, run_dir=tmp_path / "run"):
        train(model, opt, 305, after_backward=record)
    run = open_run(tmp_path / "run")
    spikes = [a for a in run.problems() if a.kind == "spike"]
    assert spikes and min(a.step for a in spikes) == 301
    assert not [a for a in run.problems() if a.step < 301]
    # the oracle: each layer's norm at 301 against its median over steps 251-300
    ratio = {k: norms[301][k] / np.median([n[k] for n in norms[251:301]]) for k in norms[301]}
    at301 = {a.layer for a in spikes if a.step == 301 and a.layer}
    assert at301 == {k for k, r in ratio.items() if r > 10}
    assert max(ratio, key=ratio.get) in at301
    for a in spikes:
        if a.step == 301 and a.layer:
            assert a.value == pytest.approx(norms[301][a.layer], rel=1e-5)
            assert a.params == [f"{a.layer}.weight", f"{a.layer}.bias"]
            assert f"layer {a.layer}" in str(a) and "step 301" in str(a)
    assert 302 in run.captured_steps


def test_healthy_500_step_run_reports_nothing(tmp_path):
    model, _ = _setup()
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    with trace(model, stats=True, every=100, run_dir=tmp_path / "run"):
        train(model, opt, 500)
    run = open_run(tmp_path / "run")
    assert run.problems() == []
    assert run.steps.tolist() == list(range(500))
    assert run.captured_steps == [0, 100, 200, 300, 400]


@pytest.mark.parametrize("parts", ["100 steps", "as flush_every(6)"])
def test_summary_equals_the_gradients_and_reads_back_the_same(tmp_path, monkeypatch, parts):
    """What is recorded equals p.grad as the loop saw it; the log read back (by open_run,
    pandas, polars, DuckDB; during and after the run) equals it. With parts of 100 steps,
    step 150 is read from parts and the tail; with the watch's own (1000 steps for six
    parameters), from step 0's part and the tail."""
    from paddleviz_widget.runs import format as fmt
    from paddleviz_widget.runs import watch

    if parts == "100 steps":
        monkeypatch.setattr(watch, "flush_every", lambda n: 100)
    else:
        assert fmt.flush_every(6) == 1000 and fmt.flush_every(100) == fmt.flush_every(10**4) == 100
    model, opt = _setup()
    expected: list[tuple[float, list[float], list[float]]] = []
    during = {}

    def record(step, loss):
        grads = _grads(model)
        expected.append((float(loss), [float(np.sqrt((g * g).sum())) for g in grads.values()],
                         [float(np.abs(g).max()) for g in grads.values()]))  # fmt: skip
        if step == 150:  # a notebook opening the run while it is written: part + tail
            during["run"] = open_run(tmp_path / "run")
        return True

    with trace(model, stats=True, every=100, run_dir=tmp_path / "run"):
        train(model, opt, 230, after_backward=record)
    run = open_run(tmp_path / "run")
    names = sorted(p.name for p in (tmp_path / "run" / "steps").glob("part-*"))
    if parts == "100 steps":
        assert run.meta["flush_every"] == 100 and len(names) == 4  # 0, 1-99, 100-199, 200-229
    else:  # step 0's part, then one written at the end
        assert run.meta["flush_every"] == 1000
        assert names == ["part-000000000-000000000.parquet", "part-000000001-000000229.parquet"]
    loss = np.array([e[0] for e in expected])
    norm = np.array([e[1] for e in expected])
    top = np.array([e[2] for e in expected])
    assert run.steps.tolist() == list(range(230))
    np.testing.assert_allclose(run.loss, loss, rtol=1e-6)
    np.testing.assert_allclose(run.param_stat("norm"), norm, rtol=1e-5)
    np.testing.assert_allclose(run.param_stat("max_abs"), top, rtol=1e-6)
    assert not run.param_stat("nan").any() and not run.param_stat("inf").any()
    layer = run.layer_norm()
    np.testing.assert_allclose(layer[:, 0], np.hypot(norm[:, 0], norm[:, 1]), rtol=1e-5)
    early = during["run"]
    assert early.meta["status"] == "running"
    assert early.steps.tolist() == list(range(151))  # recorded inside loss.backward()
    np.testing.assert_array_equal(early.param_stat("norm"), run.param_stat("norm")[:151])
    assert early.refresh() and early.steps.tolist() == list(range(230))
    assert early.meta["status"] == "finished" and not early.refresh()

    import pandas as pd

    frame = pd.read_parquet(tmp_path / "run" / "steps")
    assert len(frame) == 230 * len(run.params)
    wide = frame.pivot(index="step", columns="param", values="norm")
    wide = wide[[p.name for p in run.params]]
    np.testing.assert_array_equal(wide.to_numpy(np.float32), run.param_stat("norm"))
    np.testing.assert_allclose(frame.groupby("step")["loss"].first().to_numpy(), loss, rtol=1e-6)
    polars = pytest.importorskip("polars")
    assert polars.read_parquet(tmp_path / "run" / "steps" / "*.parquet").height == len(frame)
    duckdb = pytest.importorskip("duckdb")
    top_fc3 = duckdb.sql(
        f"SELECT max(max_abs) FROM '{tmp_path / 'run' / 'steps'}/*.parquet' WHERE layer = 'fc3'"
    ).fetchall()[0][0]
    assert top_fc3 == pytest.approx(float(top[:, 4:].max()), rel=1e-6)


def test_watch_leaves_grads_rng_and_results_alone(tmp_path):
    def run(watched: bool) -> tuple[list[float], list[np.ndarray]]:
        model, opt = _setup()
        losses: list[float] = []

        def record(step, loss):
            losses.append(float(loss))
            return True

        if watched:
            with trace(model, stats=True, every=7, run_dir=tmp_path / "run"):
                train(model, opt, 30, after_backward=record)
        else:
            train(model, opt, 30, after_backward=record)
        return losses, [p.numpy() for p in model.parameters()] + [paddle.randn([3]).numpy()]

    plain, watched = run(False), run(True)
    assert plain[0] == watched[0]
    for a, b in zip(plain[1], watched[1]):
        np.testing.assert_array_equal(a, b)


def test_thresholds_are_checked_and_kept(tmp_path):
    model, opt = _setup()
    with pytest.raises(ValueError, match="spike_factr"):
        trace(model, run_dir=tmp_path / "x", thresholds={"spike_factr": 3})
    with pytest.raises(ValueError, match="run_dir"):
        trace(model, every=10)
    with pytest.raises(ValueError, match="model"):
        trace(run_dir=tmp_path / "x")
    with trace(model, run_dir=tmp_path / "run", thresholds={"spike_factor": 4}):
        train(model, opt, 2)
    assert open_run(tmp_path / "run").meta["thresholds"]["spike_factor"] == 4.0


def test_layer_whose_gradient_vanishes_is_reported_when_it_starts(tmp_path):
    model, opt = _setup()
    scale = {"now": 1.0}
    for p in model.fc2.parameters():
        p.register_hook(lambda g: g * scale["now"])  # fc2's own gradient only, not upstream's

    def shrink(step, x):
        if step == 60:
            scale["now"] = 1e-6

    with trace(model, every=1000, run_dir=tmp_path / "run"):
        train(model, opt, 80, before=shrink)
    run = open_run(tmp_path / "run")
    [anomaly] = run.problems()
    assert (anomaly.step, anomaly.kind, anomaly.layer) == (60, "vanishing", "fc2")
    assert anomaly.params == ["fc2.weight", "fc2.bias"]
    assert run.captured_steps == [0, 61]
    norms = run.layer_norm()
    assert norms[60, 1] < 1e-3 * min(norms[60, 0], norms[60, 2])


def test_a_failing_run_log_stops_itself_and_the_training_goes_on(tmp_path, capsys, monkeypatch):
    import shutil

    from paddleviz_widget.runs import watch

    monkeypatch.setattr(watch, "flush_every", lambda n: 100)  # a part at step 99
    model, opt = _setup()
    losses: list[float] = []

    def record(step, loss):
        losses.append(float(loss))
        if step == 50:
            shutil.rmtree(tmp_path / "run")  # e.g. a cleanup script: step 99's part fails
        return True

    with trace(model, every=1000, run_dir=tmp_path / "run"):
        train(model, opt, 120, after_backward=record)
    assert len(losses) == 120
    err = capsys.readouterr().err
    assert "paddleviz_widget: run log" in err and "stopped at step 99" in err


def test_a_run_log_failing_at_its_end_is_said_and_never_raised(tmp_path, capsys):
    """The last part is written when the block ends: its failure is said on stderr, like one
    during the run, and the user's code after the block runs."""
    import shutil

    model, opt = _setup()

    def record(step, loss):
        if step == 50:
            shutil.rmtree(tmp_path / "run")
        return True

    with trace(model, every=1000, run_dir=tmp_path / "run"):
        train(model, opt, 60, after_backward=record)
    err = capsys.readouterr().err
    assert "paddleviz_widget: run log" in err and "stopped at step 60" in err
    assert err.count("paddleviz_widget: run log") == 1


def test_tensor_op_path_of_other_devices_gives_the_same_summary():
    """The path gradients on a GPU (or a Paddle without in-place reading) take, run on the
    CPU: the same numbers as NumPy's in-place reading, NaN/Inf included."""
    from paddleviz_widget.runs.summary import GradSummary

    paddle.seed(2)
    model = paddle.nn.Sequential(paddle.nn.Linear(300, 300), paddle.nn.Linear(300, 3))
    x = paddle.randn([4, 300])
    x[1, 7] = float("nan")
    model(x).square().mean().backward()
    params = list(model.parameters())
    numpy_path = GradSummary(params).read()
    tensor_ops = GradSummary(params, in_place=False).read()
    for a, b in zip(numpy_path, tensor_ops):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert numpy_path[2].sum() > 0  # NaN counted


def _hooks(model: paddle.nn.Layer) -> int:
    return sum(len(m._forward_pre_hooks) + len(m._forward_post_hooks)
               for m in model.sublayers(include_self=True))  # fmt: skip


def test_layer_hooks_only_in_forwards_of_captured_steps_and_no_stale_culprit(tmp_path):
    """Between full captures a forward runs no hook of ours (their Python cost per layer
    call); the forward NaN of summary-only step 3 is not named by step 4's capture."""
    model, opt = _setup()
    plain = _hooks(model)
    hooked: dict[int, int] = {}

    def poison(step, x):
        if step == 3:
            x[0, 0] = float("nan")

    def record(step, loss):
        hooked[step + 1] = _hooks(model)  # armed (or not) for the next step's forward
        return step != 3

    with trace(model, stats=True, every=5, run_dir=tmp_path / "run"):
        train(model, opt, 12, before=poison, after_backward=record)
    run = open_run(tmp_path / "run")
    assert [a.step for a in run.anomalies] == [3]
    assert run.captured_steps == [0, 4, 5, 10]
    full = {s for s in hooked if s in run.captured_steps}
    assert full == {4, 5, 10}
    assert all(hooked[s] > plain for s in full)
    assert all(hooked[s] == plain for s in hooked if s not in full)
    assert "forward_nonfinite" not in run.graph(4)["meta"]
    assert _hooks(model) == plain
