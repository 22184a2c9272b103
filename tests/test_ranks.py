"""Reading a multi-rank run (runs/ranks.py, runs/cross_rank.py) from rank logs written by the
run log's own writer (tests/rank_logs.py), each scenario of the issue planted in the arrays;
oracles from the arrays the test wrote."""

from __future__ import annotations

import json

import numpy as np
import pytest
from rank_logs import Plant, branchy_captures, ranked_run

from paddleviz_widget import RunLogError
from paddleviz_widget.runs import format as fmt
from paddleviz_widget.runs.ranks import is_ranked, open_ranks


@pytest.fixture(scope="module")
def model():
    params, layers, docs = branchy_captures()
    return {"params": params, "layers": layers, "captures": docs}


def _run(tmp_path, model, name="run", **kw):
    path = tmp_path / name
    return path, ranked_run(path, **model, **kw)


def _layer_l2(norms, params, layers):
    out = np.full(len(layers), np.nan)
    for j, layer in enumerate(layers):
        mine = [float(norms[i]) for i, p in enumerate(params) if p.layer == layer]
        mine = [v for v in mine if not np.isnan(v)]
        if mine:
            out[j] = np.sqrt(sum(v * v for v in mine))
    return out


def test_healthy_run_reports_nothing_and_reads_each_rank(tmp_path, model):
    path, oracle = _run(tmp_path, model, world_size=4)
    assert is_ranked(path) and not is_ranked(fmt.rank_dir(path, 0))
    run = open_ranks(path)
    assert (run.run_id, run.world_size, run.ranks, run.notes) == ("job-1", 4, [0, 1, 2, 3], [])
    assert run.report() == []
    at = run.layer_norm_at(12)
    assert at.shape == (4, len(run.layers)) and at.dtype == np.float32
    for i, r in enumerate(run.ranks):
        want = _layer_l2(oracle["norms"][r][12], oracle["params"], run.layers)
        np.testing.assert_allclose(at[i], want, rtol=1e-6)
        np.testing.assert_allclose(run.rank(r).loss, oracle["loss"][r])
    assert np.isnan(run.layer_norm_at(10_000)).all()


def test_nan_in_rank_2s_batch_at_step_5(tmp_path, model):
    path, oracle = _run(tmp_path, model, world_size=4, plant=Plant(nan=(2, 5)))
    (finding,) = open_ranks(path).report()
    assert (finding.kind, finding.step, finding.ranks) == ("nonfinite", 5, [2])
    assert finding.params == [p.name for p in oracle["params"]]  # every gradient got the NaN
    assert finding.layer == oracle["params"][0].layer
    assert str(finding) == finding.message
    assert "step 5" in finding.message and "rank 2" in finding.message


def test_a_nan_that_never_reached_a_loss_is_not_pinned_on_a_rank(tmp_path, model):
    """Rank 1's batch holds a NaN a ReLU cuts off before the loss (seen in a real 2-rank
    LeNet launch): every rank's gradients hold it after the all-reduce, no loss is NaN. It
    said "ranks 0-3 went non-finite first", as if each had; it cannot tell, and says so."""
    path, _ = _run(tmp_path, model, world_size=4, plant=Plant(nan=(1, 5), nan_loss=False))
    (finding,) = open_ranks(path).report()
    assert (finding.kind, finding.step, finding.ranks) == ("nonfinite", 5, [0, 1, 2, 3])
    assert str(finding).startswith("step 5: NaN/Inf gradients on every rank at once and no ")
    assert "the rank it came from is not in the logs" in str(finding)
    assert "went non-finite first" not in str(finding)


def test_branch_only_rank_1_takes(tmp_path, model):
    path, oracle = _run(tmp_path, model, world_size=2, plant=Plant(branch_rank=1))
    run = open_ranks(path)
    (finding,) = run.report()
    assert run.notes == []  # ranks of different missing sets are not called unsynchronised
    branch = [p.name for p in oracle["params"] if p.layer == "branch"]
    assert (finding.kind, finding.step, finding.ranks) == ("missing_grad", 0, [0])
    assert (finding.layer, finding.params) == ("branch", branch)
    assert "rank 0" in finding.message and "rank 1" in finding.message


def test_a_branch_hidden_by_find_unused_parameters_is_found_in_the_graphs(tmp_path, model):
    # Every rank holds the branch's all-reduced gradient, so the digests agree; the rank that
    # did not take it has a capture whose graph does not reach its parameters.
    plant = Plant(branch_rank=1, filled=True)
    path, oracle = _run(tmp_path, model, world_size=2, plant=plant)
    (finding,) = open_ranks(path).report()
    branch = [p.name for p in oracle["params"] if p.layer == "branch"]
    assert (finding.kind, finding.step, finding.ranks) == ("missing_grad", 0, [0])
    assert (finding.layer, finding.params) == ("branch", branch)
    assert "not reached by the backward graph of rank 0" in str(finding)


def test_step_inside_no_sync(tmp_path, model):
    path, oracle = _run(tmp_path, model, world_size=2, plant=Plant(unsynced=(1, 7)))
    (finding,) = open_ranks(path).report()
    assert (finding.kind, finding.step, finding.ranks) == ("unsynced", 7, [0, 1])
    a, b = (oracle["norms"][r][7].astype(np.float64) for r in (0, 1))
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    rel = (hi - lo) / hi
    assert finding.value == pytest.approx(rel.max(), rel=1e-6)
    assert set(finding.params) == {p.name for p, x in zip(oracle["params"], rel) if x > 0}
    worst = oracle["params"][int(np.argmax(rel))]
    assert finding.params[0] == worst.name and finding.layer == worst.layer


def test_ranks_never_equal_are_not_called_unsynced(mixed, model):
    tmp_path = mixed
    for r, seed in ((0, 1), (1, 2)):  # two ranks of independent numbers (tensor parallel)
        ranked_run(tmp_path / f"job{r}", world_size=2, seed=seed, **model)
        (tmp_path / f"job{r}" / f"rank-0000{r}").rename(tmp_path / "mixed" / f"rank-0000{r}")
    run = open_ranks(tmp_path / "mixed")
    assert run.report() == [] and any("not synchronised" in n for n in run.notes)


@pytest.fixture
def mixed(tmp_path):
    (tmp_path / "mixed").mkdir()
    return tmp_path


def test_bad_input_names_ranks_and_fix(tmp_path, model):
    path, _ = _run(tmp_path, model, world_size=4)
    ranked_run(tmp_path / "other", world_size=4, run_id="job-2", **model)
    (path / "rank-00002").rename(tmp_path / "kept")
    with pytest.raises(RunLogError, match=r"rank 2 of world size 4 missing .*ranks 0-1, 3"):
        open_ranks(path)
    (tmp_path / "other" / "rank-00002").rename(path / "rank-00002")
    with pytest.raises(RunLogError, match=r"different runs .*job-1.*ranks 0-1, 3.*job-2.*rank 2"):
        open_ranks(path)
    meta_path = path / "rank-00002" / fmt.META
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "run_id": "job-1", "world_size": 8}))
    with pytest.raises(RunLogError, match=r"different world sizes .*world_size 4: ranks 0-1, 3"):
        open_ranks(path)
    with pytest.raises(RunLogError, match="single-rank run log.*open_run"):
        open_ranks(path / "rank-00000")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunLogError, match="empty"):
        open_ranks(tmp_path / "empty")


def test_a_rank_killed_before_its_log_began(tmp_path, model):
    """A rank stopped (the launcher's SIGTERM once another rank failed) after its rank dir was
    made but before its run.json: seen in a real 2-rank launch. It is a rank whose log has not
    begun, as refresh() already took it, not "not a run log: pass the directory given to
    trace(run_dir=)" (the directory was the right one)."""
    path = tmp_path / "run"
    ranked_run(path, world_size=2, only=[0], **model)
    (path / "rank-00001" / "steps").mkdir(parents=True)
    with pytest.raises(RunLogError) as said:
        open_ranks(path)
    assert "rank 1 of world size 2 missing" in str(said.value)
    assert "stopped before its log began" in str(said.value)
    assert f"open_run({str(path / 'rank-00000')!r})" in str(said.value)
    live = tmp_path / "live"  # rank 0 still writing: rank 1 may yet begin, a note
    ranked_run(live, world_size=2, only=[0], running=(0,), **model)
    (live / "rank-00001" / "steps").mkdir(parents=True)
    run = open_ranks(live)
    assert (run.ranks, run.waiting) == ([0], [1])
    empty = tmp_path / "none"
    (empty / "rank-00000" / "steps").mkdir(parents=True)
    with pytest.raises(RunLogError, match=r"no rank's log has begun \(rank-00000 holds no run"):
        open_ranks(empty)


def test_rank_still_writing_and_ranks_not_recorded(tmp_path, model):
    path, oracle = _run(tmp_path, model, world_size=4, ranks=[0, 2], running=(2,), steps=130)
    run = open_ranks(path)
    assert run.ranks == [0, 2]
    assert any("ranks 1, 3 not recorded" in n for n in run.notes)
    assert any("rank 2 still being written" in n for n in run.notes)
    assert run.rank(2).steps.tolist() == list(range(130))  # a part and the tail
    assert run.report() == []
    np.testing.assert_allclose(
        run.layer_norm_at(120)[1], _layer_l2(oracle["norms"][2][120], oracle["params"],
                                             run.layers), rtol=1e-6)  # fmt: skip
    assert not run.refresh()  # still running, but nothing new: the view need not redraw
    oracle["writers"][2].close()
    assert run.refresh() and not any("still" in n for n in run.notes)


def test_a_rank_that_starts_late_is_read_by_refresh(tmp_path, model):
    """Ranks 0-2 written (rank 0 still running), rank 3 not started: opened with a note; its
    directory appearing later is read by refresh(), checked like the others."""
    path = tmp_path / "run"
    first = ranked_run(path, world_size=4, plant=Plant(nan=(3, 5)), only=[0, 1, 2], running=(0,),
                       **model)  # fmt: skip
    run = open_ranks(path)
    assert (run.ranks, run.waiting, run.live) == ([0, 1, 2], [3], True)
    assert any("rank 3 not started yet" in n for n in run.notes), run.notes
    assert run.layer_norm_at(5).shape == (3, len(run.layers))
    # Rank 3's NaN reached ranks 0-2 through the all-reduce; the finding says who is unread.
    (early,) = run.report()
    assert early.ranks == [0, 1, 2] and "rank 3 not compared (not started yet)" in str(early)

    late = ranked_run(path, world_size=4, plant=Plant(nan=(3, 5)), only=[3], **model)
    assert run.refresh()
    assert (run.ranks, run.waiting) == ([0, 1, 2, 3], [])
    assert not any("not started" in n for n in run.notes)
    assert any("rank 0 still being written" in n for n in run.notes)
    ((finding),) = run.report()
    assert (finding.kind, finding.step, finding.ranks) == ("nonfinite", 5, [3])
    np.testing.assert_allclose(
        run.layer_norm_at(7)[3], _layer_l2(late["norms"][3][7], late["params"], run.layers),
        rtol=1e-6)  # fmt: skip
    first["writers"][0].close()
    assert run.refresh() and not run.live and run.notes == []

    # A late rank of another job is refused by name, and the run keeps its ranks.
    ranked_run(tmp_path / "run2", world_size=4, only=[0, 1, 2], running=(1,), **model)
    run = open_ranks(tmp_path / "run2")
    ranked_run(tmp_path / "other", world_size=4, run_id="job-2", only=[3], **model)
    (tmp_path / "other" / "rank-00003").rename(tmp_path / "run2" / "rank-00003")
    with pytest.raises(RunLogError, match=r"different runs .*job-2.*rank 3"):
        run.refresh()
    assert (run.ranks, run.waiting) == ([0, 1, 2], [3])
